// AVX-512 load/convert/store helpers for f32/bf16/f16 rows, 16 lanes (core layer, internal).
// Include only from *_avx512*.cpp files. Everything is static inline so each ISA translation
// unit keeps its own copy. Conversions match float16.hpp bit for bit: round to nearest even,
// NaN quieted, fp16 overflow to Inf, subnormals exact.
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
  __m256i r = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(x));
  const __m512i magnitude = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 subnormal = _mm512_cmplt_epi32_mask(magnitude, _mm512_set1_epi32(0x00800000)) &
                              _mm512_cmpneq_epi32_mask(magnitude, _mm512_setzero_si512());
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
