// Strict UTF-8 decoding and encoding of `ampkit train` (train layer). See utf8.hpp.
#include "train/utf8.hpp"

#include <cstdio>

namespace ampkit::train {
namespace {

std::string hex_byte(unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(b));
  return buf;
}

}  // namespace

std::optional<Utf8Problem> decode_utf8(std::string_view bytes, std::vector<char32_t>& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const std::size_t n = bytes.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char b0 = p[i];
    if (b0 == 0) return Utf8Problem{i, "a NUL byte", true};
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    int length = 0;
    char32_t cp = 0, min = 0;
    if (b0 >= 0xc2 && b0 <= 0xdf) {
      length = 2, cp = b0 & 0x1f, min = 0x80;
    } else if (b0 >= 0xe0 && b0 <= 0xef) {
      length = 3, cp = b0 & 0x0f, min = 0x800;
    } else if (b0 >= 0xf0 && b0 <= 0xf4) {
      length = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
      return Utf8Problem{i, "an invalid UTF-8 byte " + hex_byte(b0), false};
    }
    if (i + static_cast<std::size_t>(length) > n)
      return Utf8Problem{i, "a UTF-8 sequence cut short by the end of the file", false};
    for (int k = 1; k < length; ++k) {
      const unsigned char b = p[i + static_cast<std::size_t>(k)];
      if ((b & 0xc0) != 0x80)
        return Utf8Problem{i,
                           "a UTF-8 sequence starting with " + hex_byte(b0) + " whose byte " + std::to_string(k + 1) +
                               " is " + hex_byte(b) + " (expected 0x80..0xbf)",
                           false};
      cp = (cp << 6) | (b & 0x3f);
    }
    if (cp < min) return Utf8Problem{i, "an overlong UTF-8 sequence starting with " + hex_byte(b0), false};
    if (cp >= 0xd800 && cp <= 0xdfff) return Utf8Problem{i, "an encoded UTF-16 surrogate (not UTF-8 text)", false};
    if (cp > 0x10ffff) return Utf8Problem{i, "a UTF-8 sequence above U+10FFFF", false};
    out.push_back(cp);
    i += static_cast<std::size_t>(length);
  }
  return std::nullopt;
}

void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

std::string encode_utf8(const std::vector<char32_t>& text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t cp : text) append_utf8(cp, out);
  return out;
}

std::string describe_code_point(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  const bool printable = cp > 0x20 && cp != 0x7f && !(cp >= 0x80 && cp < 0xa0);
  if (!printable) return buf;
  std::string s = "'";
  append_utf8(cp, s);
  return s + "' (" + buf + ")";
}

}  // namespace ampkit::train
