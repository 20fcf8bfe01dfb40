// The strict JSON reader of `ampkit train` (tools layer, train/). See json_value.hpp.
#include "tools/ampkit/train/json_value.hpp"

#include <charconv>
#include <cstdlib>

#include "tools/ampkit/train/utf8.hpp"

namespace ampkit::tools::train {

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  JsonValue document() {
    skip_space();
    JsonValue v = value(0);
    skip_space();
    if (i_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw JsonSyntaxError(what, i_); }

  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }

  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  JsonValue value(int depth) {
    if (depth >= JsonValue::kMaxDepth) fail("JSON nested deeper than 64 levels");
    if (i_ >= s_.size()) fail("expected a JSON value, but the text ended");
    JsonValue v;
    const char c = s_[i_];
    if (c == '{') {
      v.kind_ = JsonValue::Kind::object;
      ++i_;
      skip_space();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return v;
      }
      for (;;) {
        skip_space();
        if (i_ >= s_.size() || s_[i_] != '"') fail("expected a string key in an object");
        const std::size_t key_at = i_;
        std::string key = string();
        for (const auto& m : v.members_)
          if (m.first == key) {
            i_ = key_at;
            fail("duplicate key \"" + key + "\"");
          }
        skip_space();
        if (i_ >= s_.size() || s_[i_] != ':') fail("expected ':' after an object key");
        ++i_;
        skip_space();
        JsonValue member = value(depth + 1);
        v.members_.emplace_back(std::move(key), std::move(member));
        skip_space();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == '}') {
          ++i_;
          return v;
        }
        fail("expected ',' or '}' in an object");
      }
    }
    if (c == '[') {
      v.kind_ = JsonValue::Kind::array;
      ++i_;
      skip_space();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return v;
      }
      for (;;) {
        skip_space();
        v.items_.push_back(value(depth + 1));
        skip_space();
        if (i_ < s_.size() && s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ']') {
          ++i_;
          return v;
        }
        fail("expected ',' or ']' in an array");
      }
    }
    if (c == '"') {
      v.kind_ = JsonValue::Kind::string;
      v.text_ = string();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.kind_ = JsonValue::Kind::number;
      v.text_ = number();
      return v;
    }
    if (literal("true")) {
      v.kind_ = JsonValue::Kind::boolean;
      v.boolean_ = true;
      return v;
    }
    if (literal("false")) {
      v.kind_ = JsonValue::Kind::boolean;
      return v;
    }
    if (literal("null")) return v;
    fail("expected a JSON value");
  }

  std::string number() {
    const std::size_t start = i_;
    auto digits = [&] {
      const std::size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - from;
    };
    if (s_[i_] == '-') ++i_;
    if (i_ < s_.size() && s_[i_] == '0') {
      ++i_;
    } else if (digits() == 0) {
      fail("expected digits in a number");
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (digits() == 0) fail("expected digits after '.' in a number");
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (digits() == 0) fail("expected digits in a number's exponent");
    }
    return std::string(s_.substr(start, i_ - start));
  }

  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail("expected 4 hex digits after \\u");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= static_cast<unsigned>(h - 'A' + 10);
      else {
        --i_;
        fail("expected a hex digit after \\u");
      }
    }
    return v;
  }

  std::string string() {
    ++i_;  // the opening quote
    std::string out;
    for (;;) {
      if (i_ >= s_.size()) fail("a string is not closed");
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return out;
      }
      if (c < 0x20) fail("a raw control character in a string");
      if (c == '\\') {
        ++i_;
        if (i_ >= s_.size()) fail("a string is not closed");
        const char e = s_[i_++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            char32_t cp = hex4();
            if (cp >= 0xdc00 && cp <= 0xdfff) fail("a lone low surrogate \\u escape");
            if (cp >= 0xd800 && cp <= 0xdbff) {
              if (s_.substr(i_, 2) != "\\u") fail("a high surrogate \\u escape without its low half");
              i_ += 2;
              const char32_t low = hex4();
              if (low < 0xdc00 || low > 0xdfff) fail("a high surrogate \\u escape without its low half");
              cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
            }
            if (cp == 0) fail("a NUL character (\\u0000) in a string");
            append_utf8(cp, out);
            break;
          }
          default: --i_; fail("an invalid escape in a string");
        }
        continue;
      }
      // A run of raw bytes: must be valid UTF-8.
      std::size_t end = i_;
      while (end < s_.size() && s_[end] != '"' && s_[end] != '\\' && static_cast<unsigned char>(s_[end]) >= 0x20) ++end;
      std::vector<char32_t> ignored;
      if (const auto problem = decode_utf8(s_.substr(i_, end - i_), ignored)) {
        i_ += problem->offset;
        fail("invalid UTF-8 in a string (" + problem->what + ")");
      }
      out.append(s_.substr(i_, end - i_));
      i_ = end;
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

JsonValue JsonValue::parse(std::string_view text) { return JsonParser(text).document(); }

std::string_view JsonValue::kind_name() const {
  switch (kind_) {
    case Kind::null: return "null";
    case Kind::boolean: return "true or false";
    case Kind::number: return "a number";
    case Kind::string: return "a string";
    case Kind::array: return "an array";
    case Kind::object: return "an object";
  }
  return "?";
}

const JsonValue* JsonValue::find(std::string_view key) const {
  for (const auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

std::optional<std::uint64_t> JsonValue::as_uint64() const {
  if (kind_ != Kind::number) return std::nullopt;
  std::uint64_t v = 0;
  const auto r = std::from_chars(text_.data(), text_.data() + text_.size(), v);
  if (r.ec != std::errc() || r.ptr != text_.data() + text_.size()) return std::nullopt;
  return v;
}

std::optional<double> JsonValue::as_double() const {
  if (kind_ != Kind::number) return std::nullopt;
  double v = 0.0;
  const auto r = std::from_chars(text_.data(), text_.data() + text_.size(), v);
  if (r.ec != std::errc() || r.ptr != text_.data() + text_.size()) return std::nullopt;
  return v;
}

}  // namespace ampkit::tools::train
