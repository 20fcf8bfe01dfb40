// The skinny GEMM engine on AVX-512 (kernels layer): kernel-list entry "gemm_skinny_f32_avx512"
// (gemm_front_end.cpp), taken when 1 <= min(m, n) <= 16. Reads the large operand in place with
// on-the-fly widening (f32/bf16/f16, fp16 mode applied per vector), fp32 FMA (gemm_skinny.hpp).
#include <immintrin.h>

#include "cpu/gemm/gemm_io_avx512.hpp"
#include "cpu/gemm/gemm_skinny.hpp"

namespace ampkit::cpu {
namespace {

struct SkinnyAvx512 {
  using Vec = __m512;
  using Mask = __mmask16;
  static constexpr std::int64_t kLanes = 16, kMaxCols = 16, kAccumulators = 16, kRowBlock = 512;

  static inline Mask mask_for(std::int64_t valid) {
    return valid >= 16 ? static_cast<Mask>(0xffff) : valid <= 0 ? static_cast<Mask>(0) : simd512::tail_mask(valid);
  }
  template <DType T>
  static inline Vec load(const unsigned char* p, Mask m) {
    return simd512::load_masked<T>(p, 0, m);
  }
  static inline Vec zero() { return _mm512_setzero_ps(); }
  static inline Vec set1(float x) { return _mm512_set1_ps(x); }
  static inline Vec loadu(const float* p) { return _mm512_loadu_ps(p); }
  static inline void storeu(float* p, Vec v) { _mm512_storeu_ps(p, v); }
  static inline Vec fmadd(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
  // Horizontal sum in a fixed order: lanes l + 8, then 4, 2, 1 (through memory: GCC 12 warns
  // about the undefined operand of the 512-bit extract intrinsics).
  static inline float reduce_add(Vec v) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, v);
    const __m256 h = _mm256_add_ps(_mm256_load_ps(lanes), _mm256_load_ps(lanes + 8));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }

  // gemm_math::is_f16_subnormal_input / round_to_bf16 on 16 lanes (same bits as the scalar).
  static inline Vec fp16_mode(Vec x, bool flush, bool alt, std::int64_t& count) {
    const __m512i u = _mm512_castps_si512(x);
    const __m512i abs = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
    const __mmask16 sub = _mm512_cmpgt_epu32_mask(abs, _mm512_setzero_si512()) &
                          _mm512_cmplt_epu32_mask(abs, _mm512_set1_epi32(0x38800000));
    count += __builtin_popcount(static_cast<unsigned>(sub));
    if (flush) x = _mm512_mask_mov_ps(x, sub, _mm512_setzero_ps());
    if (alt) {
      const __m512i v = _mm512_castps_si512(x);
      const __m512i hi = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(v, 16), _mm512_set1_epi32(1));
      const __m512i rounded =
          _mm512_and_si512(_mm512_add_epi32(_mm512_add_epi32(v, _mm512_set1_epi32(0x7fff)), lsb), hi);
      const __m512i quiet = _mm512_and_si512(_mm512_or_si512(v, _mm512_set1_epi32(0x00400000)), hi);
      const __mmask16 nan =
          _mm512_cmpgt_epu32_mask(_mm512_and_si512(v, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
      x = _mm512_castsi512_ps(_mm512_mask_mov_epi32(rounded, nan, quiet));
    }
    return x;
  }
};

struct SkinnyIoAvx512 : IoAvx512 {
  static constexpr std::int64_t kMr = 32;
};

}  // namespace

void gemm_run_skinny_f32_avx512(const GemmProblem& problem, GemmCounters& counters) {
  gemm_run_engine<SkinnyEngine<SkinnyAvx512, SkinnyIoAvx512>>(problem, counters);
}

}  // namespace ampkit::cpu
