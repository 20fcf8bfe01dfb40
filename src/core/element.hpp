// Element access by runtime dtype, and the one switch that turns a runtime dtype into a template
// parameter (core layer, internal). Used by references, front ends, packing and the tests.
// Everything is static inline, so ISA translation units may include it (no shared weak symbols).
#pragma once

#include <bit>
#include <cmath>
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

/// v rounded to float with "round to odd" (truncate, then set the last bit if inexact): rounding
/// that float to bf16/f16 (nearest even) equals rounding v directly, since float keeps more than
/// two extra bits: one rounding from double, no double rounding.
static inline float round_to_odd_float(double v) {
  float f = static_cast<float>(v);
  if (std::isnan(v) || std::isinf(f) || static_cast<double>(f) == v) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(v)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

/// Stores v at element i of `base` (dtype t) with one rounding (nearest even) from double. The
/// one rounding of a double to a dtype: every reference and the GEMM output path use it.
static inline void store_double(void* base, DType t, std::int64_t i, double v) {
  if (t == DType::f32)
    static_cast<float*>(base)[i] = static_cast<float>(v);
  else
    store_element(base, t, i, round_to_odd_float(v));
}

/// x rounded once (nearest even, overflow to ±Inf, subnormals kept) to dtype t, returned as the
/// float that holds that value exactly (what store_double stores, read back).
static inline float round_to_dtype(DType t, double x) {
  if (t == DType::bf16) return bf16_bits_to_float(float_to_bf16_bits(round_to_odd_float(x)));
  if (t == DType::f16) return half_bits_to_float(float_to_half_bits(round_to_odd_float(x)));
  return static_cast<float>(x);
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
