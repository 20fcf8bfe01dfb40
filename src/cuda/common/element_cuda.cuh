// Element access by dtype in CUDA kernels (CUDA layer, internal): f32 / bf16 / f16 to fp32
// exactly, fp32 to each dtype rounded once to nearest even (NaN stays NaN, f16 overflow goes to
// Inf: DESIGN.md section 2), and the fp16-mode tests. Included by the .cu files of src/cuda/.
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "ampkit/core/dtype.hpp"

namespace ampkit::cuda {

/// Element i of a buffer of runtime dtype t, widened exactly (t is uniform across a warp).
__device__ __forceinline__ float load_as_float(const void* base, DType t, std::int64_t i) {
  if (t == DType::f32) return static_cast<const float*>(base)[i];
  if (t == DType::bf16) return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
  return __half2float(static_cast<const __half*>(base)[i]);
}

/// v rounded once to t and stored at element i.
__device__ __forceinline__ void store_from_float(void* base, DType t, std::int64_t i, float v) {
  if (t == DType::f32)
    static_cast<float*>(base)[i] = v;
  else if (t == DType::bf16)
    static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v);
  else
    static_cast<__half*>(base)[i] = __float2half_rn(v);
}

/// 0 < |v| < 2^-14: v (widened from an f16) is an f16 subnormal.
__device__ __forceinline__ bool is_f16_subnormal(float v) {
  const float a = fabsf(v);
  return a != 0.0f && a < 0x1p-14f;
}

/// v rounded to bf16 (nearest even) and widened back: the alt mode's operand.
__device__ __forceinline__ float round_to_bf16(float v) { return __bfloat162float(__float2bfloat16_rn(v)); }

/// Compile-time dtype roles of the templated kernels (one runtime switch per launch).
template <class T>
struct Io;
template <>
struct Io<float> {
  __device__ static float load(const float* p, std::int64_t i) { return p[i]; }
  __device__ static void store(float* p, std::int64_t i, float v) { p[i] = v; }
};
template <>
struct Io<__nv_bfloat16> {
  __device__ static float load(const __nv_bfloat16* p, std::int64_t i) { return __bfloat162float(p[i]); }
  __device__ static void store(__nv_bfloat16* p, std::int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
};
template <>
struct Io<__half> {
  __device__ static float load(const __half* p, std::int64_t i) { return __half2float(p[i]); }
  __device__ static void store(__half* p, std::int64_t i, float v) { p[i] = __float2half_rn(v); }
};

}  // namespace ampkit::cuda
