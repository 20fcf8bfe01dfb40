// AVX2 (+FMA, F16C) load/convert/store helpers for f32/bf16/f16 rows, 8 lanes (core layer,
// internal). Include only from *_avx2.cpp files; everything is static inline. Conversions match
// float16.hpp bit for bit. Tails go through a small stack buffer (AVX2 has no 16-bit masks).
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
