// Element access by runtime dtype, and the one switch that turns a runtime dtype into a template
// parameter (core layer, internal). Used by references, front ends, packing and the tests.
// Everything is static inline, so ISA translation units may include it (no shared weak symbols).
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/float16.hpp"

namespace ampkit::cpu {

/// Element i of `base` (dtype t), widened exactly to float.
static inline float load_element(const void* base, DType t, std::int64_t i) {
  if (t == DType::bf16) return bf16_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
  if (t == DType::f16) return half_bits_to_float(static_cast<const std::uint16_t*>(base)[i]);
  return static_cast<const float*>(base)[i];
}

/// Stores v at element i of `base` (dtype t), rounded to nearest even.
static inline void store_element(void* base, DType t, std::int64_t i, float v) {
  if (t == DType::bf16)
    static_cast<std::uint16_t*>(base)[i] = float_to_bf16_bits(v);
  else if (t == DType::f16)
    static_cast<std::uint16_t*>(base)[i] = float_to_half_bits(v);
  else
    static_cast<float*>(base)[i] = v;
}

/// Calls f.template operator()<T>() with T = t: a generic lambda `[&]<DType T>() {...}` becomes
/// one instantiation per dtype.
template <class F>
static inline decltype(auto) visit_dtype(DType t, F&& f) {
  if (t == DType::bf16) return f.template operator()<DType::bf16>();
  if (t == DType::f16) return f.template operator()<DType::f16>();
  return f.template operator()<DType::f32>();
}

}  // namespace ampkit::cpu
