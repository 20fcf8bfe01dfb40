// GEMM engine with the bf16 32x12 AVX512_BF16 micro-kernel (kernels layer). Kernel-list entry
// "gemm_ukernel_bf16_32x12_avx512bf16" (gemm_front_end.cpp): both operands bf16 as the mode sees
// them (bf16, or f16 rounded to bf16 by the alt mode while packing); fp32 accumulation.
// vdpbf16ps adds the two products of a k pair to the fp32 accumulator (odd k first, then even)
// with round-to-nearest-even, treating bf16 subnormal inputs and fp32 subnormal results as zero.
#include <immintrin.h>

#include "cpu/gemm/gemm_driver.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {
namespace {

// tile[j * 32 + i] (+)= sum over kk < kp of A(i, kk) * B(kk, j)  (i < 32, j < 12, kp even)
//   (+= when accumulate: continuing the sums parked by the previous k block, same order)
//   a: packed A sliver [kp/2][32][2] bf16 (k pairs adjacent); b: packed B sliver [kp/2][12][2].
// 24 zmm accumulators; per k pair: 2 A loads, 12 32-bit broadcasts of B pairs, 24 vdpbf16ps.
struct Bf16Avx512 : Avx512Ops {
  using Packed = std::uint16_t;
  static constexpr std::int64_t kMr = 32, kNr = 12;
  static constexpr bool kPairs = true;

  static inline void ukernel_part(std::int64_t kp, const std::uint16_t* a, const std::uint16_t* b, float* tile,
                                  bool accumulate) {
    __m512 c0[12], c1[12];
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) {
      c0[j] = accumulate ? _mm512_load_ps(tile + j * 32) : _mm512_setzero_ps();
      c1[j] = accumulate ? _mm512_load_ps(tile + j * 32 + 16) : _mm512_setzero_ps();
    }
    for (std::int64_t kk = 0; kk < kp; kk += 2) {
      const __m512bh a0 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(a));
      const __m512bh a1 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(a + 32));
      _mm_prefetch(reinterpret_cast<const char*>(a + 1024), _MM_HINT_T0);
#pragma GCC unroll 12
      for (int j = 0; j < 12; ++j) {
        std::int32_t pair;
        __builtin_memcpy(&pair, b + 2 * j, sizeof(pair));
        const __m512bh bj = reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
        c0[j] = _mm512_dpbf16_ps(c0[j], a0, bj);
        c1[j] = _mm512_dpbf16_ps(c1[j], a1, bj);
      }
      a += 64;
      b += 24;
    }
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) {
      _mm512_store_ps(tile + j * 32, c0[j]);
      _mm512_store_ps(tile + j * 32 + 16, c1[j]);
    }
  }
};

}  // namespace

void gemm_run_bf16_avx512bf16(const ops::GemmProblem& problem, ops::GemmCounters& counters) {
  gemm_run<Bf16Avx512>(problem, counters);
}

}  // namespace ampkit::cpu
