// JSON lines of the `ampkit bench` and `check` subcommands (tools layer, common/): one object per
// line, keys in the order added, numbers in their shortest round-trip form, NaN/Inf as null.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ampkit::tools {

/// One JSON object written as one line; keys appear in the order they were added.
class JsonLine {
 public:
  JsonLine& add(std::string_view key, std::string_view value);
  JsonLine& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  JsonLine& add(std::string_view key, double value);  // NaN and +-Inf are written as null
  JsonLine& add(std::string_view key, std::int64_t value);
  JsonLine& add(std::string_view key, int value) { return add(key, std::int64_t{value}); }
  JsonLine& add(std::string_view key, bool value);
  JsonLine& add_null(std::string_view key);
  JsonLine& add(std::string_view key, const std::vector<std::int64_t>& values);  // JSON array
  /// The object, e.g. {"op":"layer_norm","ms":0.0123}, without a newline.
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view k);
  std::string body_;
};

/// `text` as a JSON string literal with quotes ("a\"b\n" -> "\"a\\\"b\\n\"").
std::string json_quote(std::string_view text);
/// Shortest decimal text that reads back as exactly `value` ("null" when not finite).
std::string json_number(double value);

}  // namespace ampkit::tools
