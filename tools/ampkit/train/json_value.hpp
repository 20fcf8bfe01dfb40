// A strict JSON reader for `ampkit train` (tools layer, train/): the safetensors header of a
// checkpoint and the run configuration stored in it. RFC 8259 exactly: no comments, no trailing
// commas, no duplicate keys, strings of valid UTF-8 without raw control characters; numbers are
// kept as their text so that 64-bit integers read back exactly. Writing uses bench/json_line.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ampkit::tools::train {

/// A syntax error: what() is "<what> at byte <offset>".
class JsonSyntaxError : public std::runtime_error {
 public:
  JsonSyntaxError(const std::string& what, std::size_t offset)
      : std::runtime_error(what + " at byte " + std::to_string(offset)), offset_(offset) {}
  std::size_t offset() const { return offset_; }

 private:
  std::size_t offset_;
};

class JsonValue {
 public:
  enum class Kind : std::uint8_t { null, boolean, number, string, array, object };

  /// Parses a whole document (white space around it allowed, nothing else). Nesting deeper than
  /// kMaxDepth is refused. Throws JsonSyntaxError.
  static JsonValue parse(std::string_view text);
  static constexpr int kMaxDepth = 64;

  Kind kind() const { return kind_; }
  bool is_object() const { return kind_ == Kind::object; }
  bool is_array() const { return kind_ == Kind::array; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_number() const { return kind_ == Kind::number; }
  /// "null", "true or false", "a number", "a string", "an array", "an object".
  std::string_view kind_name() const;

  bool boolean() const { return boolean_; }
  /// The decoded string, or the number's text.
  const std::string& text() const { return text_; }
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }
  /// The member `key` of an object, or null when absent (or when this is not an object).
  const JsonValue* find(std::string_view key) const;

  /// The number as an unsigned integer when it is written as one ("12", not "12.0" or "-1")
  /// and fits in 64 bits.
  std::optional<std::uint64_t> as_uint64() const;
  /// The number as a double (strtod of its text).
  std::optional<double> as_double() const;

 private:
  friend class JsonParser;
  Kind kind_ = Kind::null;
  bool boolean_ = false;
  std::string text_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

}  // namespace ampkit::tools::train
