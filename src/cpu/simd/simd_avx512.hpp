// The AVX-512 vector vocabulary (kernels layer, internal), the one every CPU kernel family uses
// on AVX-512: `simd512::` converts and moves f32/bf16/f16 vectors of 16 lanes (conversions match
// float16.hpp bit for bit: round to nearest even, NaN quieted, fp16 overflow to Inf, subnormals
// exact); `Avx512Ops` is the `Ops` argument of the norm, attention and GEMM templates (fp32
// arithmetic, fixed-order lane sums, exp, the fp16 modes, rows of any dtype). Its AVX2 twin,
// simd_avx2.hpp's `Avx2Ops`, has the same names. Include only from *_avx512*.cpp / *_amx.cpp
// files; everything has internal linkage, so each ISA translation unit keeps its own copy.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "ampkit/core/dtype.hpp"

namespace ampkit::simd512 {

static inline __mmask16 tail_mask(std::int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << count) - 1u);
}

// 16 bf16 values (as 16-bit integers) -> floats.
static inline __m512 bf16x16_to_f32(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// floats -> 16 bf16 values, round to nearest even, NaN -> quiet NaN.
static inline __m256i f32_to_bf16x16(__m512 x) {
  const __m512i u = _mm512_castps_si512(x);
#if defined(__AVX512BF16__)
  // vcvtneps2bf16 rounds to nearest even but treats subnormal inputs as zero; redo those lanes.
  // (vfpclassps class 0x20 = subnormal of either sign: one instruction, not and + 2 compares.)
  __m256i r = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x));
  const __mmask16 subnormal = _mm512_fpclass_ps_mask(x, 0x20);
  if (subnormal == 0) return r;
#endif
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i rounded = _mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
  rounded = _mm512_srli_epi32(rounded, 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  const __m512i quiet = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  rounded = _mm512_mask_mov_epi32(rounded, nan, quiet);
#if defined(__AVX512BF16__)
  return _mm256_mask_mov_epi16(r, subnormal, _mm512_cvtepi32_epi16(rounded));
#else
  return _mm512_cvtepi32_epi16(rounded);
#endif
}

// Two vectors of floats -> 32 bf16 values, a's first: f32_to_bf16x16 of each, bit for bit. With
// AVX512_BF16 one vcvtne2ps2bf16 rounds both (half the conversions of two vcvtneps2bf16).
static inline __m512i f32_to_bf16x32(__m512 a, __m512 b) {
#if defined(__AVX512BF16__)
  const __mmask16 subnormal = _mm512_fpclass_ps_mask(a, 0x20) | _mm512_fpclass_ps_mask(b, 0x20);
  if (subnormal == 0) return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(b, a));  // low half: b's argument
#endif
  return _mm512_inserti64x4(_mm512_castsi256_si512(f32_to_bf16x16(a)), f32_to_bf16x16(b), 1);
}

static inline __m512 f16x16_to_f32(__m256i h) { return _mm512_cvtph_ps(h); }
static inline __m256i f32_to_f16x16(__m512 x) {
  return _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/// 16 elements of dtype T starting at element i of `base`, widened to fp32.
template <DType T>
static inline __m512 load(const void* base, std::int64_t i) {
  if constexpr (T == DType::f32) {
    return _mm512_loadu_ps(static_cast<const float*>(base) + i);
  } else {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const std::uint16_t*>(base) + i));
    return T == DType::bf16 ? bf16x16_to_f32(h) : f16x16_to_f32(h);
  }
}

/// As load, for the lanes set in m (others read as 0; no memory touched past them).
template <DType T>
static inline __m512 load_masked(const void* base, std::int64_t i, __mmask16 m) {
  if constexpr (T == DType::f32) {
    return _mm512_maskz_loadu_ps(m, static_cast<const float*>(base) + i);
  } else {
    const __m256i h = _mm256_maskz_loadu_epi16(m, static_cast<const std::uint16_t*>(base) + i);
    return T == DType::bf16 ? bf16x16_to_f32(h) : f16x16_to_f32(h);
  }
}

/// Rounds v to dtype T and stores 16 elements at element i of `base`.
template <DType T>
static inline void store(void* base, std::int64_t i, __m512 v) {
  if constexpr (T == DType::f32) {
    _mm512_storeu_ps(static_cast<float*>(base) + i, v);
  } else {
    const __m256i h = T == DType::bf16 ? f32_to_bf16x16(v) : f32_to_f16x16(v);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<std::uint16_t*>(base) + i), h);
  }
}

/// As store, for the lanes set in m only.
template <DType T>
static inline void store_masked(void* base, std::int64_t i, __m512 v, __mmask16 m) {
  if constexpr (T == DType::f32) {
    _mm512_mask_storeu_ps(static_cast<float*>(base) + i, m, v);
  } else {
    const __m256i h = T == DType::bf16 ? f32_to_bf16x16(v) : f32_to_f16x16(v);
    _mm256_mask_storeu_epi16(static_cast<std::uint16_t*>(base) + i, m, h);
  }
}

}  // namespace ampkit::simd512

namespace ampkit::cpu {
namespace {

struct Avx512Ops {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr std::int64_t kLanes = 16;

  // ---- fp32 arithmetic, lane by lane (each one IEEE operation, so the scalar values) ----
  [[gnu::always_inline]] static V zero() { return _mm512_setzero_ps(); }
  [[gnu::always_inline]] static V set1(float a) { return _mm512_set1_ps(a); }
  [[gnu::always_inline]] static V load(const float* p) { return _mm512_loadu_ps(p); }
  [[gnu::always_inline]] static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  [[gnu::always_inline]] static V add(V a, V b) { return _mm512_add_ps(a, b); }
  [[gnu::always_inline]] static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  [[gnu::always_inline]] static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  [[gnu::always_inline]] static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }    // a*b + c, one rounding
  [[gnu::always_inline]] static V fmsub(V a, V b, V c) { return _mm512_fmsub_ps(a, b, c); }    // a*b - c
  [[gnu::always_inline]] static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }  // c - a*b, one rounding
  [[gnu::always_inline]] static V max(V a, V b) { return _mm512_max_ps(a, b); }
  /// Lane-wise a / b and sqrt(a), correctly rounded (the values of the scalar operations).
  [[gnu::always_inline]] static V div(V a, V b) { return _mm512_div_ps(a, b); }
  [[gnu::always_inline]] static V sqrt(V a) { return _mm512_sqrt_ps(a); }
  /// Correctly rounded square root (vsqrtss), the same value as std::sqrt.
  [[gnu::always_inline]] static float sqrt(float a) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(a))); }
  /// Lane-wise `a < 0 ? 0 : a` (NaN stays NaN, -0 stays -0).
  [[gnu::always_inline]] static V floor0(V a) { return _mm512_max_ps(_mm512_setzero_ps(), a); }

  // ---- lanes ----
  /// The lanes below `valid` (none for valid <= 0, all for valid >= 16).
  [[gnu::always_inline]] static Mask mask(std::int64_t valid) {
    return valid >= 16 ? static_cast<Mask>(0xffff) : valid <= 0 ? static_cast<Mask>(0) : simd512::tail_mask(valid);
  }
  /// v with the lanes from `count` on set to 0.
  [[gnu::always_inline]] static V head(V v, std::int64_t count) {
    return _mm512_maskz_mov_ps(simd512::tail_mask(count), v);
  }
  /// v with the lanes from `count` (0..16) on replaced by `fill`.
  [[gnu::always_inline]] static V head_or(V v, std::int64_t count, float fill) {
    return _mm512_mask_mov_ps(_mm512_set1_ps(fill), simd512::tail_mask(count), v);
  }
  /// All lanes = lane q of v.
  [[gnu::always_inline]] static V lane(V v, int q) { return _mm512_permutexvar_ps(_mm512_set1_epi32(q), v); }
  /// Sum of the 16 lanes in a fixed tree: lane i + i+8, then i + i+4, i + i+2, i + i+1.
  /// (Not _mm512_reduce_add_ps: GCC 12's version warns about its own undefined vectors.)
  [[gnu::always_inline]] static float sum(V v) {
    const __m512 halves = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0x4e));  // lo+hi 256 bits
    const __m256 h = _mm512_maskz_extractf32x8_ps(0xff, halves, 0);
    __m128 q = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_add_ps(q, _mm_movehl_ps(q, q));
    q = _mm_add_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }
  /// Lane q of the result = sum(v[q]), bit for bit (the same pairings as sum: lane i + i+8,
  /// then i + i+4, i + i+2, i + i+1), for 16 vectors at once: rows across lanes.
  [[gnu::always_inline]] static V sums(const V (&v)[16]) {
    V w[8], x[4], y[2];
    for (int k = 0; k < 8; ++k)  // w[k]: rows 2k, 2k+1 in 256-bit halves, 8 partials each
      w[k] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0x44),
                           _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0xee));
    for (int j = 0; j < 4; ++j)  // x[j]: rows 4j..4j+3 in 128-bit blocks, 4 partials each
      x[j] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0x88),
                           _mm512_shuffle_f32x4(w[2 * j], w[2 * j + 1], 0xdd));
    for (int i = 0; i < 2; ++i)  // y[i], block k: rows 8i+k, 8i+4+k, 2 partials each
      y[i] = _mm512_add_ps(_mm512_shuffle_ps(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                           _mm512_shuffle_ps(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    // z, lane 4k+j: row k+4j; then back to lane q = row q.
    const V z = _mm512_add_ps(_mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(idx, z);
  }
  /// The largest lane (max is exact, so the order does not matter).
  [[gnu::always_inline]] static float max_lane(V v) {
    const __m512 halves = _mm512_max_ps(v, _mm512_maskz_shuffle_f32x4(0xffff, v, v, 0x4e));
    const __m256 h = _mm512_maskz_extractf32x8_ps(0xff, halves, 0);
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }

  // ---- math ----
  /// exp(x) lane by lane: gemm_math::exp_f32's algorithm with fused multiply-adds (written out,
  /// so no compiler contraction can change them; Avx2Ops::exp does the same operations):
  /// clamp to [-104, 89] (NaN kept), n = round(x log2 e) by the shifter, r = x - n ln 2 in two
  /// parts, a degree-7 polynomial, times 2^(n/2) twice. Within 2 ulp of exp over [-104, 89].
  [[gnu::always_inline]] static V exp(V x) {
    x = _mm512_max_ps(_mm512_set1_ps(-104.0f), x);  // max(c, NaN) = NaN
    x = _mm512_min_ps(_mm512_set1_ps(89.0f), x);
    const __m512 shifter = _mm512_set1_ps(12582912.0f);
    const __m512 t = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), shifter);
    const __m512 n = _mm512_sub_ps(t, shifter);
    const __m512i ni = _mm512_sub_epi32(_mm512_castps_si512(t), _mm512_castps_si512(shifter));
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    for (float c : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f})
      p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
    const __m512i n1 = _mm512_srai_epi32(ni, 1), n2 = _mm512_sub_epi32(ni, n1);
    const __m512i bias = _mm512_set1_epi32(127);
    const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
    const __m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
    return _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  }
  /// The fp16 mode on 16 widened f16 values: gemm_math::is_f16_subnormal_input counted into
  /// `count`, flushed to 0 (flush), then gemm_math::round_to_bf16 (alt); the scalar bits.
  [[gnu::always_inline]] static V fp16_mode(V x, bool flush, bool alt, std::int64_t& count) {
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

  // ---- memory: f32/bf16/f16 widened to fp32 on load, rounded once on store ----
  /// Hints the cache line holding byte `offset` of `base` into L1 (never faults).
  [[gnu::always_inline]] static void prefetch(const void* base, std::int64_t offset) {
    _mm_prefetch(static_cast<const char*>(base) + offset, _MM_HINT_T0);
  }
  /// `count` (1..16) elements of dtype T at element i, widened; lanes past count read as 0.
  template <DType T>
  [[gnu::always_inline]] static V load(const void* base, std::int64_t i, std::int64_t count) {
    if (count == kLanes) return simd512::load<T>(base, i);
    return simd512::load_masked<T>(base, i, simd512::tail_mask(count));
  }
  /// Rounds to T and stores the first `count` (1..16) lanes at element i.
  template <DType T>
  [[gnu::always_inline]] static void store(void* base, std::int64_t i, V v, std::int64_t count) {
    if (count == kLanes) {
      simd512::store<T>(base, i, v);
    } else {
      simd512::store_masked<T>(base, i, v, simd512::tail_mask(count));
    }
  }
  /// The lanes of m (mask()) of 16 elements of dtype T at p, widened; the others read as 0.
  template <DType T>
  [[gnu::always_inline]] static V load_masked(const void* p, Mask m) {
    return simd512::load_masked<T>(p, 0, m);
  }
  /// n contiguous elements of dtype t at src widened into dst (no byte past the row is read).
  static inline void load_row(const void* src, DType t, std::int64_t n, float* dst) {
    switch (t) {
      case DType::f32: return load_row<DType::f32>(src, n, dst);
      case DType::bf16: return load_row<DType::bf16>(src, n, dst);
      case DType::f16: return load_row<DType::f16>(src, n, dst);
      case DType::i32: return;  // never a floating-point row
    }
  }
  /// n floats of src rounded to dtype t into dst (no byte past the row is written).
  static inline void store_row(void* dst, DType t, const float* src, std::int64_t n) {
    switch (t) {
      case DType::f32: return store_row<DType::f32>(dst, src, n);
      case DType::bf16: return store_row<DType::bf16>(dst, src, n);
      case DType::f16: return store_row<DType::f16>(dst, src, n);
      case DType::i32: return;  // never a floating-point row
    }
  }
  template <DType T>
  static inline void load_row(const void* src, std::int64_t n, float* dst) {
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, simd512::load<T>(src, i));
    if (i < n) {
      const __mmask16 m = simd512::tail_mask(n - i);
      _mm512_mask_storeu_ps(dst + i, m, simd512::load_masked<T>(src, i, m));
    }
  }
  template <DType T>
  static inline void store_row(void* dst, const float* src, std::int64_t n) {
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) simd512::store<T>(dst, i, _mm512_loadu_ps(src + i));
    if (i < n) {
      const __mmask16 m = simd512::tail_mask(n - i);
      simd512::store_masked<T>(dst, i, _mm512_maskz_loadu_ps(m, src + i), m);
    }
  }

  // ---- non-temporal stores (outputs not re-read soon: the norms' large y and dx) ----
  /// Rounds v to T and stores all 16 lanes at element i, bypassing the caches (no read for
  /// ownership). The address must be aligned to the stored bytes: 64 for f32, 32 for bf16/f16.
  template <DType T>
  [[gnu::always_inline]] static void stream(void* base, std::int64_t i, V v) {
    if constexpr (T == DType::f32) {
      _mm512_stream_ps(static_cast<float*>(base) + i, v);
    } else {
      const __m256i h = T == DType::bf16 ? simd512::f32_to_bf16x16(v) : simd512::f32_to_f16x16(v);
      _mm256_stream_si256(reinterpret_cast<__m256i*>(static_cast<std::uint16_t*>(base) + i), h);
    }
  }
  /// Orders earlier non-temporal stores before later stores (sfence).
  [[gnu::always_inline]] static void stream_fence() { _mm_sfence(); }

  // ---- two vectors at once (32 elements from element i, v0 first) ----
  /// store(base, i, v0, 16) and store(base, i + 16, v1, 16): the same bits; bf16 is rounded by
  /// one instruction for both vectors where the ISA has one.
  template <DType T>
  [[gnu::always_inline]] static void store2(void* base, std::int64_t i, V v0, V v1) {
    if constexpr (T == DType::bf16) {
      _mm512_storeu_si512(static_cast<std::uint16_t*>(base) + i, simd512::f32_to_bf16x32(v0, v1));
    } else {
      simd512::store<T>(base, i, v0);
      simd512::store<T>(base, i + kLanes, v1);
    }
  }
  /// stream(base, i, v0) and stream(base, i + 16, v1), the same alignment (32 bytes for bf16).
  template <DType T>
  [[gnu::always_inline]] static void stream2(void* base, std::int64_t i, V v0, V v1) {
    if constexpr (T == DType::bf16) {
      const __m512i h = simd512::f32_to_bf16x32(v0, v1);
      auto* const p = reinterpret_cast<__m256i*>(static_cast<std::uint16_t*>(base) + i);
      _mm256_stream_si256(p, _mm512_castsi512_si256(h));
      _mm256_stream_si256(p + 1, _mm512_extracti64x4_epi64(h, 1));
    } else {
      stream<T>(base, i, v0);
      stream<T>(base, i + kLanes, v1);
    }
  }
};

}  // namespace
}  // namespace ampkit::cpu
