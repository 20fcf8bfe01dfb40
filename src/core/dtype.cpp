// Parsing dtype names (core layer).
#include "ampkit/core/dtype.hpp"

#include <string>

#include "ampkit/core/error.hpp"

namespace ampkit {

DType parse_dtype(std::string_view text, const char* what) {
  if (text == "f32") return DType::f32;
  if (text == "bf16") return DType::bf16;
  if (text == "f16") return DType::f16;
  if (text == "i32") return DType::i32;
  fail(what, "expected one of f32, bf16, f16, i32, but got '", std::string(text), "'");
}

}  // namespace ampkit
