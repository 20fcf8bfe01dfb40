// Row loads/stores of the GEMM engines on AVX2 (kernels layer, internal): n contiguous elements
// of a runtime dtype <-> fp32, 8 lanes at a time, partial tails through a small buffer (no byte
// past the row is touched). Included by gemm_ukernel_f32_avx2.cpp and gemm_skinny_f32_avx2.cpp.
#pragma once

#include <cstdint>

#include "cpu/simd/simd_avx2.hpp"

namespace ampkit::cpu {
namespace {

template <DType T>
static inline void load_row_avx2(const void* src, std::int64_t n, float* dst) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, simd256::load<T>(src, i));
  if (i < n) {
    alignas(32) float rest[8];
    _mm256_store_ps(rest, simd256::load_partial<T>(src, i, n - i));
    for (std::int64_t r = 0; r < n - i; ++r) dst[i + r] = rest[r];
  }
}

template <DType T>
static inline void store_row_avx2(void* dst, const float* src, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) simd256::store<T>(dst, i, _mm256_loadu_ps(src + i));
  if (i < n) {
    alignas(32) float rest[8] = {};
    for (std::int64_t r = 0; r < n - i; ++r) rest[r] = src[i + r];
    simd256::store_partial<T>(dst, i, _mm256_load_ps(rest), n - i);
  }
}

// The I/O half of the driver traits.
struct IoAvx2 {
  static inline void load_row(const void* src, DType t, std::int64_t n, float* dst) {
    switch (t) {
      case DType::f32: return load_row_avx2<DType::f32>(src, n, dst);
      case DType::bf16: return load_row_avx2<DType::bf16>(src, n, dst);
      case DType::f16: return load_row_avx2<DType::f16>(src, n, dst);
      case DType::i32: return;  // never a GEMM operand (gemm_validate)
    }
  }
  static inline void store_row(void* dst, DType t, const float* src, std::int64_t n) {
    switch (t) {
      case DType::f32: return store_row_avx2<DType::f32>(dst, src, n);
      case DType::bf16: return store_row_avx2<DType::bf16>(dst, src, n);
      case DType::f16: return store_row_avx2<DType::f16>(dst, src, n);
      case DType::i32: return;  // never a GEMM operand (gemm_validate)
    }
  }
};

}  // namespace
}  // namespace ampkit::cpu
