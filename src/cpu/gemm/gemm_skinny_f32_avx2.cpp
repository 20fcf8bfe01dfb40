// The skinny GEMM engine on AVX2 (kernels layer): kernel-list entry "gemm_skinny_f32_avx2"
// (gemm_front_end.cpp), taken when 1 <= min(m, n) <= 16. Reads the large operand in place with
// on-the-fly widening (f32/bf16/f16, fp16 mode applied per vector), fp32 FMA (gemm_skinny.hpp).
#include <immintrin.h>

#include "cpu/gemm/gemm_io_avx2.hpp"
#include "cpu/gemm/gemm_skinny.hpp"

namespace ampkit::cpu {
namespace {

struct SkinnyAvx2 {
  using Vec = __m256;
  using Mask = std::int64_t;  // number of valid lanes (<= 0: none, >= 8: all)
  static constexpr std::int64_t kLanes = 8, kMaxCols = 8, kAccumulators = 8, kRowBlock = 512;

  static inline Mask mask_for(std::int64_t valid) { return valid; }
  template <DType T>
  static inline Vec load(const unsigned char* p, Mask m) {
    if (m >= 8) return simd256::load<T>(p, 0);
    if (m <= 0) return _mm256_setzero_ps();
    return simd256::load_partial<T>(p, 0, m);
  }
  static inline Vec zero() { return _mm256_setzero_ps(); }
  static inline Vec set1(float x) { return _mm256_set1_ps(x); }
  static inline Vec loadu(const float* p) { return _mm256_loadu_ps(p); }
  static inline void storeu(float* p, Vec v) { _mm256_storeu_ps(p, v); }
  static inline Vec fmadd(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
  static inline float reduce_add(Vec v) { return simd256::reduce_add(v); }

  // gemm_math::is_f16_subnormal_input / round_to_bf16 on 8 lanes (same bits as the scalar).
  static inline Vec fp16_mode(Vec x, bool flush, bool alt, std::int64_t& count) {
    const __m256i u = _mm256_castps_si256(x);
    const __m256i abs = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    const __m256i sub = _mm256_and_si256(_mm256_cmpgt_epi32(abs, _mm256_setzero_si256()),
                                         _mm256_cmpgt_epi32(_mm256_set1_epi32(0x38800000), abs));
    count += __builtin_popcount(static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(sub))));
    if (flush) x = _mm256_andnot_ps(_mm256_castsi256_ps(sub), x);
    if (alt) {
      const __m256i v = _mm256_castps_si256(x);
      const __m256i hi = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
      const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(v, 16), _mm256_set1_epi32(1));
      const __m256i rounded =
          _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(v, _mm256_set1_epi32(0x7fff)), lsb), hi);
      const __m256i quiet = _mm256_and_si256(_mm256_or_si256(v, _mm256_set1_epi32(0x00400000)), hi);
      const __m256i nan =
          _mm256_cmpgt_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
      x = _mm256_castsi256_ps(_mm256_blendv_epi8(rounded, quiet, nan));
    }
    return x;
  }
};

struct SkinnyIoAvx2 : IoAvx2 {
  static constexpr std::int64_t kMr = 16;
};

}  // namespace

void gemm_run_skinny_f32_avx2(const GemmProblem& problem, GemmCounters& counters) {
  gemm_run_engine<SkinnyEngine<SkinnyAvx2, SkinnyIoAvx2>>(problem, counters);
}

}  // namespace ampkit::cpu
