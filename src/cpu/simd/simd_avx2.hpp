// The AVX2 (+FMA, F16C) vector vocabulary (kernels layer, internal), the one every CPU kernel
// family uses on AVX2: `simd256::` converts and moves f32/bf16/f16 vectors of 8 lanes
// (conversions match float16.hpp bit for bit; tails go through a small stack buffer, AVX2 has no
// 16-bit masks); `Avx2Ops` is the `Ops` argument of the norm, attention and GEMM templates, with
// the names of simd_avx512.hpp's `Avx512Ops`. Include only from *_avx2.cpp files; everything has
// internal linkage.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "ampkit/core/dtype.hpp"

namespace ampkit::simd256 {

static inline __m256 bf16x8_to_f32(__m128i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static inline __m128i f32_to_bf16x8(__m256 x) {
  const __m256i u = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  __m256i rounded = _mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
  rounded = _mm256_srli_epi32(rounded, 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  const __m256 nan = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
  rounded = _mm256_blendv_epi8(rounded, quiet, _mm256_castps_si256(nan));
  // 8 x u32 (each <= 0xffff) -> 8 x u16: pack within 128-bit lanes, then gather the halves.
  const __m256i packed = _mm256_packus_epi32(rounded, rounded);
  return _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
}

static inline __m256 f16x8_to_f32(__m128i h) { return _mm256_cvtph_ps(h); }
static inline __m128i f32_to_f16x8(__m256 x) {
  return _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

/// 8 elements of dtype T starting at element i of `base`, widened to fp32.
template <DType T>
static inline __m256 load(const void* base, std::int64_t i) {
  if constexpr (T == DType::f32) {
    return _mm256_loadu_ps(static_cast<const float*>(base) + i);
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const std::uint16_t*>(base) + i));
    return T == DType::bf16 ? bf16x8_to_f32(h) : f16x8_to_f32(h);
  }
}

/// The first `count` (< 8) elements at element i; the other lanes read as 0.
template <DType T>
static inline __m256 load_partial(const void* base, std::int64_t i, std::int64_t count) {
  alignas(32) unsigned char buffer[32] = {};
  const std::size_t size = dtype_size(T);
  std::memcpy(buffer, static_cast<const unsigned char*>(base) + i * size, count * size);
  return load<T>(buffer, 0);
}

/// Rounds v to dtype T and stores 8 elements at element i of `base`.
template <DType T>
static inline void store(void* base, std::int64_t i, __m256 v) {
  if constexpr (T == DType::f32) {
    _mm256_storeu_ps(static_cast<float*>(base) + i, v);
  } else {
    const __m128i h = T == DType::bf16 ? f32_to_bf16x8(v) : f32_to_f16x8(v);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<std::uint16_t*>(base) + i), h);
  }
}

/// Stores the first `count` (< 8) lanes of v, rounded to T, at element i.
template <DType T>
static inline void store_partial(void* base, std::int64_t i, __m256 v, std::int64_t count) {
  alignas(32) unsigned char buffer[32];
  store<T>(buffer, 0, v);
  const std::size_t size = dtype_size(T);
  std::memcpy(static_cast<unsigned char*>(base) + i * size, buffer, count * size);
}

/// Horizontal sum of 8 floats, in a fixed order.
static inline float reduce_add(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

}  // namespace ampkit::simd256

namespace ampkit::cpu {
namespace {

struct Avx2Ops {
  using V = __m256;
  using Mask = std::int64_t;  // the number of valid lanes (<= 0: none, >= 8: all)
  static constexpr std::int64_t kLanes = 8;

  // ---- fp32 arithmetic, lane by lane (each one IEEE operation, so the scalar values) ----
  [[gnu::always_inline]] static V zero() { return _mm256_setzero_ps(); }
  [[gnu::always_inline]] static V set1(float a) { return _mm256_set1_ps(a); }
  [[gnu::always_inline]] static V load(const float* p) { return _mm256_loadu_ps(p); }
  [[gnu::always_inline]] static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  [[gnu::always_inline]] static V add(V a, V b) { return _mm256_add_ps(a, b); }
  [[gnu::always_inline]] static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  [[gnu::always_inline]] static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  [[gnu::always_inline]] static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }    // a*b + c, one rounding
  [[gnu::always_inline]] static V fmsub(V a, V b, V c) { return _mm256_fmsub_ps(a, b, c); }    // a*b - c
  [[gnu::always_inline]] static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }  // c - a*b, one rounding
  [[gnu::always_inline]] static V max(V a, V b) { return _mm256_max_ps(a, b); }
  /// Lane-wise a / b and sqrt(a), correctly rounded (the values of the scalar operations).
  [[gnu::always_inline]] static V div(V a, V b) { return _mm256_div_ps(a, b); }
  [[gnu::always_inline]] static V sqrt(V a) { return _mm256_sqrt_ps(a); }
  /// Correctly rounded square root (sqrtss), the same value as std::sqrt.
  [[gnu::always_inline]] static float sqrt(float a) { return _mm_cvtss_f32(_mm_sqrt_ss(_mm_set_ss(a))); }
  /// Lane-wise `a < 0 ? 0 : a` (NaN stays NaN, -0 stays -0).
  [[gnu::always_inline]] static V floor0(V a) { return _mm256_max_ps(_mm256_setzero_ps(), a); }

  // ---- lanes ----
  /// The lanes below `valid` (as a count: <= 0 none, >= 8 all).
  [[gnu::always_inline]] static Mask mask(std::int64_t valid) { return valid; }
  /// v with the lanes from `count` on set to 0.
  [[gnu::always_inline]] static V head(V v, std::int64_t count) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i keep = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lane);
    return _mm256_and_ps(v, _mm256_castsi256_ps(keep));
  }
  /// v with the lanes from `count` (0..8) on replaced by `fill`.
  [[gnu::always_inline]] static V head_or(V v, std::int64_t count, float fill) {
    const __m256i keep =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm256_blendv_ps(_mm256_set1_ps(fill), v, _mm256_castsi256_ps(keep));
  }
  /// All lanes = lane q of v.
  [[gnu::always_inline]] static V lane(V v, int q) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(q)); }
  /// Sum of the 8 lanes in a fixed tree: lane i + i+4, then i + i+2, i + i+1.
  [[gnu::always_inline]] static float sum(V v) { return simd256::reduce_add(v); }
  /// Lane q of the result = sum(v[q]), bit for bit (the same pairings as sum: lane i + i+4,
  /// then i + i+2, i + i+1), for 8 vectors at once: rows across lanes.
  [[gnu::always_inline]] static V sums(const V (&v)[8]) {
    V x[4], y[2];
    for (int j = 0; j < 4; ++j)  // x[j]: rows 2j, 2j+1 in 128-bit halves, 4 partials each
      x[j] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * j], v[2 * j + 1], 0x20),
                           _mm256_permute2f128_ps(v[2 * j], v[2 * j + 1], 0x31));
    for (int i = 0; i < 2; ++i)  // y[i], half k: rows 4i+k, 4i+2+k, 2 partials each
      y[i] = _mm256_add_ps(_mm256_shuffle_ps(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                           _mm256_shuffle_ps(x[2 * i], x[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
    // z, lane 4k+j: row k+2j; then back to lane q = row q.
    const V z = _mm256_add_ps(_mm256_shuffle_ps(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)),
                              _mm256_shuffle_ps(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm256_permutevar8x32_ps(z, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  }
  /// The largest lane (max is exact, so the order does not matter).
  [[gnu::always_inline]] static float max_lane(V v) {
    __m128 q = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    q = _mm_max_ps(q, _mm_movehl_ps(q, q));
    q = _mm_max_ss(q, _mm_movehdup_ps(q));
    return _mm_cvtss_f32(q);
  }

  // ---- math ----
  /// exp as Avx512Ops::exp, 8 lanes: the same operations, so the same bits.
  [[gnu::always_inline]] static V exp(V x) {
    x = _mm256_max_ps(_mm256_set1_ps(-104.0f), x);  // max(c, NaN) = NaN
    x = _mm256_min_ps(_mm256_set1_ps(89.0f), x);
    const __m256 shifter = _mm256_set1_ps(12582912.0f);
    const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), shifter);
    const __m256 n = _mm256_sub_ps(t, shifter);
    const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(shifter));
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    for (float c : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f})
      p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const __m256i bias = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
  }
  /// The fp16 mode on 8 widened f16 values, as Avx512Ops::fp16_mode (the scalar bits).
  [[gnu::always_inline]] static V fp16_mode(V x, bool flush, bool alt, std::int64_t& count) {
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

  // ---- memory: f32/bf16/f16 widened to fp32 on load, rounded once on store ----
  /// Hints the cache line holding byte `offset` of `base` into L1 (never faults).
  [[gnu::always_inline]] static void prefetch(const void* base, std::int64_t offset) {
    _mm_prefetch(static_cast<const char*>(base) + offset, _MM_HINT_T0);
  }
  /// `count` (1..8) elements of dtype T at element i, widened; lanes past count read as 0.
  template <DType T>
  [[gnu::always_inline]] static V load(const void* base, std::int64_t i, std::int64_t count) {
    if (count == kLanes) return simd256::load<T>(base, i);
    return simd256::load_partial<T>(base, i, count);
  }
  /// Rounds to T and stores the first `count` (1..8) lanes at element i.
  template <DType T>
  [[gnu::always_inline]] static void store(void* base, std::int64_t i, V v, std::int64_t count) {
    if (count == kLanes) {
      simd256::store<T>(base, i, v);
    } else {
      simd256::store_partial<T>(base, i, v, count);
    }
  }
  /// The lanes of m (mask()) of 8 elements of dtype T at p, widened; the others read as 0.
  template <DType T>
  [[gnu::always_inline]] static V load_masked(const void* p, Mask m) {
    if (m >= 8) return simd256::load<T>(p, 0);
    if (m <= 0) return _mm256_setzero_ps();
    return simd256::load_partial<T>(p, 0, m);
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
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, simd256::load<T>(src, i));
    if (i < n) {
      alignas(32) float rest[8];
      _mm256_store_ps(rest, simd256::load_partial<T>(src, i, n - i));
      for (std::int64_t r = 0; r < n - i; ++r) dst[i + r] = rest[r];
    }
  }
  template <DType T>
  static inline void store_row(void* dst, const float* src, std::int64_t n) {
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) simd256::store<T>(dst, i, _mm256_loadu_ps(src + i));
    if (i < n) {
      alignas(32) float rest[8] = {};
      for (std::int64_t r = 0; r < n - i; ++r) rest[r] = src[i + r];
      simd256::store_partial<T>(dst, i, _mm256_load_ps(rest), n - i);
    }
  }

  // ---- non-temporal stores (outputs not re-read soon: the norms' large y and dx) ----
  /// Rounds v to T and stores all 8 lanes at element i, bypassing the caches (no read for
  /// ownership). The address must be aligned to the stored bytes: 32 for f32, 16 for bf16/f16.
  template <DType T>
  [[gnu::always_inline]] static void stream(void* base, std::int64_t i, V v) {
    if constexpr (T == DType::f32) {
      _mm256_stream_ps(static_cast<float*>(base) + i, v);
    } else {
      const __m128i h = T == DType::bf16 ? simd256::f32_to_bf16x8(v) : simd256::f32_to_f16x8(v);
      _mm_stream_si128(reinterpret_cast<__m128i*>(static_cast<std::uint16_t*>(base) + i), h);
    }
  }
  /// Orders earlier non-temporal stores before later stores (sfence).
  [[gnu::always_inline]] static void stream_fence() { _mm_sfence(); }

  // ---- two vectors at once (16 elements from element i, v0 first; Avx512Ops' names) ----
  template <DType T>
  [[gnu::always_inline]] static void store2(void* base, std::int64_t i, V v0, V v1) {
    store<T>(base, i, v0, kLanes);
    store<T>(base, i + kLanes, v1, kLanes);
  }
  template <DType T>
  [[gnu::always_inline]] static void stream2(void* base, std::int64_t i, V v0, V v1) {
    stream<T>(base, i, v0);
    stream<T>(base, i + kLanes, v1);
  }
};

}  // namespace
}  // namespace ampkit::cpu
