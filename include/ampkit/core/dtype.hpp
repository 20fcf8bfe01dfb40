// Element types of ampkit tensors (core layer): f32, bf16, f16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ampkit {

enum class DType : std::uint8_t { f32, bf16, f16 };

/// Bytes per element.
constexpr std::size_t dtype_size(DType t) { return t == DType::f32 ? 4 : 2; }

/// "f32", "bf16" or "f16".
constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
  }
  return "?";
}

/// Parses "f32" / "bf16" / "f16"; throws Error naming `what` otherwise.
DType parse_dtype(std::string_view text, const char* what);

}  // namespace ampkit
