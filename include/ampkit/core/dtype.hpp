// Element types of ampkit tensors (core layer): the floating types f32, bf16, f16, and i32 for
// integer data (token ids, class targets). Kernels that compute take only the floating types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ampkit {

enum class DType : std::uint8_t { f32, bf16, f16, i32 };

/// Bytes per element.
constexpr std::size_t dtype_size(DType t) { return t == DType::bf16 || t == DType::f16 ? 2 : 4; }

/// True for f32, bf16 and f16 (the dtypes the numerical kernels take); false for i32 and for
/// values outside the enumeration.
constexpr bool is_float_dtype(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

/// "f32", "bf16", "f16" or "i32" ("?" for a value outside the enumeration).
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
    case DType::i32: return "i32";
  }
  return "?";
}

/// Parses "f32" / "bf16" / "f16" / "i32"; throws Error naming `what` otherwise.
DType parse_dtype(std::string_view text, const char* what);

}  // namespace ampkit
