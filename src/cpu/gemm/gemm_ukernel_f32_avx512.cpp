// GEMM engine with the fp32 32x12 AVX-512 FMA micro-kernel (kernels layer). Kernel-list entry
// "gemm_ukernel_f32_32x12_avx512" (gemm_front_end.cpp): f32 operands, and every operand that
// widens exactly to f32 (bf16, f16 in exact/flush/alt mode) when bf16 dot products don't apply.
#include <immintrin.h>

#include "cpu/gemm/gemm_driver.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {
namespace {

// tile[j * 32 + i] (+)= sum over kk < kp of a[kk * 32 + i] * b[kk * 12 + j]  (i < 32, j < 12)
//   (+= when accumulate: continuing the sums parked by the previous k block, same order)
//   a: packed A sliver [kp][32] fp32; b: packed B sliver [kp][12] fp32.
// 24 zmm accumulators (2 per column), one fp32 FMA chain per element in k order.
struct F32Avx512 : Avx512Ops {
  using Packed = float;
  static constexpr std::int64_t kMr = 32, kNr = 12;
  static constexpr bool kPairs = false;
  static constexpr bool kParkedTilesInL3 = true;  // gemm_blocking.hpp

  static inline void ukernel_part(std::int64_t kp, const float* a, const float* b, float* tile, bool accumulate) {
    __m512 c0[12], c1[12];
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) {
      c0[j] = accumulate ? _mm512_load_ps(tile + j * 32) : _mm512_setzero_ps();
      c1[j] = accumulate ? _mm512_load_ps(tile + j * 32 + 16) : _mm512_setzero_ps();
    }
    for (std::int64_t kk = 0; kk < kp; ++kk) {
      const __m512 a0 = _mm512_loadu_ps(a), a1 = _mm512_loadu_ps(a + 16);
      // Both lines of A's k step 16 steps ahead (one line alone left every other to the
      // hardware prefetcher).
      _mm_prefetch(reinterpret_cast<const char*>(a + 512), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(a + 528), _MM_HINT_T0);
#pragma GCC unroll 12
      for (int j = 0; j < 12; ++j) {
        const __m512 bj = _mm512_set1_ps(b[j]);
        c0[j] = _mm512_fmadd_ps(a0, bj, c0[j]);
        c1[j] = _mm512_fmadd_ps(a1, bj, c1[j]);
      }
      a += 32;
      b += 12;
    }
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) {
      _mm512_store_ps(tile + j * 32, c0[j]);
      _mm512_store_ps(tile + j * 32 + 16, c1[j]);
    }
  }
};

}  // namespace

void gemm_run_f32_avx512(const ops::GemmProblem& problem, ops::GemmCounters& counters) {
  gemm_run<F32Avx512>(problem, counters);
}

}  // namespace ampkit::cpu
