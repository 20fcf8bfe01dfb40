// GEMM engine with the fp32 16x6 AVX2 FMA micro-kernel (kernels layer). Kernel-list entry
// "gemm_ukernel_f32_16x6_avx2" (gemm_front_end.cpp): every dtype combination; bf16 and f16
// operands are widened exactly to fp32 while packing (after the fp16 mode).
#include <immintrin.h>

#include "cpu/gemm/gemm_driver.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/simd/simd_avx2.hpp"

namespace ampkit::cpu {
namespace {

// tile[j * 16 + i] (+)= sum over kk < kp of a[kk * 16 + i] * b[kk * 6 + j]  (i < 16, j < 6)
//   (+= when accumulate: continuing the sums parked by the previous k block, same order)
//   a: packed A sliver [kp][16] fp32; b: packed B sliver [kp][6] fp32. 12 ymm accumulators.
struct F32Avx2 : Avx2Ops {
  using Packed = float;
  static constexpr std::int64_t kMr = 16, kNr = 6;
  static constexpr bool kPairs = false;

  static inline void ukernel_part(std::int64_t kp, const float* a, const float* b, float* tile, bool accumulate) {
    __m256 c0[6], c1[6];
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) {
      c0[j] = accumulate ? _mm256_load_ps(tile + j * 16) : _mm256_setzero_ps();
      c1[j] = accumulate ? _mm256_load_ps(tile + j * 16 + 8) : _mm256_setzero_ps();
    }
    for (std::int64_t kk = 0; kk < kp; ++kk) {
      const __m256 a0 = _mm256_loadu_ps(a), a1 = _mm256_loadu_ps(a + 8);
#pragma GCC unroll 6
      for (int j = 0; j < 6; ++j) {
        const __m256 bj = _mm256_broadcast_ss(b + j);
        c0[j] = _mm256_fmadd_ps(a0, bj, c0[j]);
        c1[j] = _mm256_fmadd_ps(a1, bj, c1[j]);
      }
      a += 16;
      b += 6;
    }
#pragma GCC unroll 6
    for (int j = 0; j < 6; ++j) {
      _mm256_store_ps(tile + j * 16, c0[j]);
      _mm256_store_ps(tile + j * 16 + 8, c1[j]);
    }
  }
};

}  // namespace

void gemm_run_f32_avx2(const ops::GemmProblem& problem, ops::GemmCounters& counters) {
  gemm_run<F32Avx2>(problem, counters);
}

}  // namespace ampkit::cpu
