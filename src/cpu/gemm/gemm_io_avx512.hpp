// Row loads/stores of the GEMM engines on AVX-512 (kernels layer, internal): n contiguous
// elements of a runtime dtype <-> fp32, 16 lanes at a time with masked tails (no byte past the
// row is touched). Included by gemm_ukernel_f32_avx512.cpp and gemm_ukernel_bf16_avx512bf16.cpp.
#pragma once

#include <cstdint>

#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {
namespace {

template <DType T>
static inline void load_row_avx512(const void* src, std::int64_t n, float* dst) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, simd512::load<T>(src, i));
  if (i < n) {
    const __mmask16 m = simd512::tail_mask(n - i);
    _mm512_mask_storeu_ps(dst + i, m, simd512::load_masked<T>(src, i, m));
  }
}

template <DType T>
static inline void store_row_avx512(void* dst, const float* src, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) simd512::store<T>(dst, i, _mm512_loadu_ps(src + i));
  if (i < n) {
    const __mmask16 m = simd512::tail_mask(n - i);
    simd512::store_masked<T>(dst, i, _mm512_maskz_loadu_ps(m, src + i), m);
  }
}

// The I/O half of the driver traits.
struct IoAvx512 {
  static inline void load_row(const void* src, DType t, std::int64_t n, float* dst) {
    switch (t) {
      case DType::f32: return load_row_avx512<DType::f32>(src, n, dst);
      case DType::bf16: return load_row_avx512<DType::bf16>(src, n, dst);
      case DType::f16: return load_row_avx512<DType::f16>(src, n, dst);
      case DType::i32: return;  // never a GEMM operand (gemm_validate)
    }
  }
  static inline void store_row(void* dst, DType t, const float* src, std::int64_t n) {
    switch (t) {
      case DType::f32: return store_row_avx512<DType::f32>(dst, src, n);
      case DType::bf16: return store_row_avx512<DType::bf16>(dst, src, n);
      case DType::f16: return store_row_avx512<DType::f16>(dst, src, n);
      case DType::i32: return;  // never a GEMM operand (gemm_validate)
    }
  }
};

}  // namespace
}  // namespace ampkit::cpu
