// Strict JSON reading of the train layer, on nlohmann-json: the safetensors header of a
// checkpoint and the JSON values stored in its metadata (the loss-scale state, the run
// configuration of `ampkit train`). nlohmann reads RFC 8259 (no comments, no trailing commas,
// strings of valid UTF-8 without raw control characters); parse_json also refuses what it lets
// through: a key given twice in one object, and nesting deeper than kMaxJsonDepth. Objects keep
// their order in the text (nlohmann::ordered_json).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ampkit::train {

using Json = nlohmann::ordered_json;

/// A syntax error: what() is "<problem> at byte <offset>" (nlohmann's description; the 0-based
/// offset of the byte where it stopped), or "<problem>" for a duplicate key or too deep nesting.
class JsonSyntaxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The deepest nesting of arrays and objects parse_json accepts.
constexpr int kMaxJsonDepth = 64;

/// Parses a whole document (white space around it allowed, nothing else). Throws
/// JsonSyntaxError.
Json parse_json(std::string_view text);

/// "null", "true or false", "a number", "a string", "an array", "an object" (for messages).
std::string_view json_kind_name(const Json& value);

/// The value as an unsigned integer when it is written as one ("12", not "12.0" or "-1") and
/// fits in 64 bits; otherwise nullopt.
std::optional<std::uint64_t> json_uint64(const Json& value);

}  // namespace ampkit::train
