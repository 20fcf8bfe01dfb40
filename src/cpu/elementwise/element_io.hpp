// Typed element loads and stores for the training-graph ops (kernels layer, internal): a dtype
// fixed at compile time (one instantiation per dtype via cpu::visit_dtype); the one-rounding store
// from double the references use (store_double) comes from core/element.hpp. Included by the
// embedding, activation, elementwise, softmax cross-entropy and optimizer kernels; static inline,
// so ISA files may include it.
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/float16.hpp"
#include "core/element.hpp"

namespace ampkit::cpu {

/// Element i of `base` (dtype T), widened exactly to float.
template <DType T>
static inline float load_as(const void* base, std::int64_t i) {
  if constexpr (T == DType::bf16)
    return bf16_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
  else if constexpr (T == DType::f16)
    return half_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
  else
    return static_cast<const float*>(base)[i];
}

/// Stores v at element i of `base` (dtype T), rounded to nearest even.
template <DType T>
static inline void store_as(void* base, std::int64_t i, float v) {
  if constexpr (T == DType::bf16)
    static_cast<std::uint16_t*>(base)[i] = float_to_bf16_bits(v);
  else if constexpr (T == DType::f16)
    static_cast<std::uint16_t*>(base)[i] = float_to_half_bits(v);
  else
    static_cast<float*>(base)[i] = v;
}

/// Byte address of row r of a [rows, n] operand with `row_stride` elements between rows.
static inline const void* row_address(const void* base, DType t, std::int64_t row_stride, std::int64_t r) {
  return static_cast<const char*>(base) + r * row_stride * static_cast<std::int64_t>(dtype_size(t));
}
static inline void* row_address(void* base, DType t, std::int64_t row_stride, std::int64_t r) {
  return static_cast<char*>(base) + r * row_stride * static_cast<std::int64_t>(dtype_size(t));
}

}  // namespace ampkit::cpu
