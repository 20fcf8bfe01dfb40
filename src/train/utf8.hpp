// UTF-8 of `ampkit train` (train layer): strict decoding of a text file into Unicode code
// points (the model's characters) and encoding back, for the corpus loader, the checkpoint's
// vocabulary and the sampler's output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ampkit::train {

/// Where and why a byte string is not valid UTF-8.
struct Utf8Problem {
  std::size_t offset = 0;  // byte offset of the first byte of the bad sequence
  std::string what;        // "a NUL byte", "an invalid UTF-8 byte 0xff", ...
  bool nul = false;        // the problem is a NUL byte (text files never hold one)
};

/// Decodes `bytes` strictly (RFC 3629: no overlong forms, no surrogates, nothing above
/// U+10FFFF, no truncated sequence) and refuses NUL bytes. On success appends the code points
/// to `out` and returns nullopt; otherwise returns the first problem (`out` then holds the code
/// points before it).
std::optional<Utf8Problem> decode_utf8(std::string_view bytes, std::vector<char32_t>& out);

/// Appends the UTF-8 form of `cp` (a Unicode scalar value) to `out`.
void append_utf8(char32_t cp, std::string& out);
/// The UTF-8 form of `text`.
std::string encode_utf8(const std::vector<char32_t>& text);

/// "U+00E9" for a code point; "'é' (U+00E9)" when printable, for messages.
std::string describe_code_point(char32_t cp);

}  // namespace ampkit::train
