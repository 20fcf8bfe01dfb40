// Strict JSON reading of the train layer on nlohmann-json (train layer). See json.hpp.
#include "ampkit/train/json.hpp"

#include <set>
#include <vector>

namespace ampkit::train {
namespace {

// "[json.exception.parse_error.101] parse error at line 1, column 6: syntax error while parsing
// value - unexpected end of input; expected '[', '{', or a literal" -> the part after "column N: ".
std::string problem_of(const nlohmann::json::parse_error& e) {
  const std::string_view what = e.what();
  const std::size_t column = what.find("column ");
  const std::size_t colon = column == std::string_view::npos ? column : what.find(": ", column);
  return std::string(colon == std::string_view::npos ? what : what.substr(colon + 2));
}

}  // namespace

Json parse_json(std::string_view text) {
  // The keys seen so far in each object being read, innermost last.
  std::vector<std::set<std::string>> open_objects;
  const Json::parser_callback_t check = [&](int depth, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth)
          throw JsonSyntaxError("nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
        if (event == Json::parse_event_t::object_start) open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end: open_objects.pop_back(); break;
      case Json::parse_event_t::key:
        if (!open_objects.back().insert(parsed.get<std::string>()).second)
          throw JsonSyntaxError("duplicate key " + parsed.dump() + " in an object");
        break;
      default: break;
    }
    return true;
  };
  try {
    return Json::parse(text, check);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann counts the bytes read, the offending one included: its offset is one less.
    throw JsonSyntaxError(problem_of(e) + " at byte " + std::to_string(e.byte > 0 ? e.byte - 1 : 0));
  }
}

std::string_view json_kind_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "true or false";
    case Json::value_t::string: return "a string";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "a number";
    default: return "a value of another kind";
  }
}

std::optional<std::uint64_t> json_uint64(const Json& value) {
  if (!value.is_number_unsigned()) return std::nullopt;
  return value.get<std::uint64_t>();
}

}  // namespace ampkit::train
