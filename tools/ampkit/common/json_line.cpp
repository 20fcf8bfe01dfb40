// JSON lines of the `ampkit bench` and `check` subcommands (tools layer, common/): escaping,
// shortest round-trip numbers, the line builder. See json_line.hpp.
#include "tools/ampkit/common/json_line.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace ampkit::tools {

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;  // UTF-8 bytes pass through unchanged
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);  // shortest round-trip form
  return std::string(buf, result.ptr);
}

void JsonLine::key(std::string_view k) {
  if (!body_.empty()) body_ += ',';
  body_ += json_quote(k);
  body_ += ':';
}

JsonLine& JsonLine::add(std::string_view k, std::string_view value) {
  key(k);
  body_ += json_quote(value);
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, double value) {
  key(k);
  body_ += json_number(value);
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, std::int64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, bool value) {
  key(k);
  body_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::add_null(std::string_view k) {
  key(k);
  body_ += "null";
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, const std::vector<std::int64_t>& values) {
  key(k);
  body_ += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) body_ += ',';
    body_ += std::to_string(values[i]);
  }
  body_ += ']';
  return *this;
}

}  // namespace ampkit::tools
