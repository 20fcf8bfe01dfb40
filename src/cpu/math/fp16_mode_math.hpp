// The fp16 modes applied to one value (kernels layer, internal): the one scalar definition of
// what exact / flush / alt do to an f16 operand widened to fp32 (count subnormals, flush them,
// round to bf16), and the output-side subnormal test. Which mode a GEMM runs in is decided by the
// numerics policy (ampkit/numerics/fp16_policy.hpp) and handed down in GemmProblem::flush/alt.
// Static inline and branch-free, so each ISA file's `omp simd` loops vectorize it. Used by the
// GEMM reference, the driver's packing, the skinny engines and the epilogue; the AVX-512
// Ops::fp16_mode is the vector form of fp16_mode_value (same bits, tested).
#pragma once

#include <bit>
#include <cstdint>

namespace ampkit::cpu::gemm_math {

/// |v| is a (non-zero) fp16 subnormal (v came from an fp16, so it is exactly one).
static inline bool is_f16_subnormal_input(float v) {
  const std::uint32_t a = std::bit_cast<std::uint32_t>(v) & 0x7fffffffu;
  return a != 0 && a < 0x38800000u;  // 0 < |v| < 2^-14
}

/// v rounded to bf16 (nearest even) and widened back; NaN stays NaN.
static inline float round_to_bf16(float v) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(v);
  const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  const bool nan = (u & 0x7fffffffu) > 0x7f800000u;
  return std::bit_cast<float>(nan ? (u | 0x00400000u) & 0xffff0000u : rounded);
}

/// An fp32 value that float_to_half_bits rounds to a non-zero fp16 subnormal:
/// 2^-25 < |x| < 2^-14 - 2^-25 (both ends are ties that round to even: 0 and 2^-14).
static inline bool rounds_to_f16_subnormal(float x) {
  const std::uint32_t a = std::bit_cast<std::uint32_t>(x) & 0x7fffffffu;
  return a > 0x33000000u && a < 0x387fe000u;
}

/// The fp16 mode on one operand value v widened exactly from an f16, `sub` =
/// is_f16_subnormal_input(v) (the caller counts it): 0 for a subnormal under flush, then rounded
/// to bf16 under alt (exact mode: flush = alt = false, v unchanged).
static inline float fp16_mode_value(float v, bool sub, bool flush, bool alt) {
  const float x = flush && sub ? 0.0f : v;
  return alt ? round_to_bf16(x) : x;
}

}  // namespace ampkit::cpu::gemm_math
