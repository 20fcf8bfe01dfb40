// The AVX-512 conversion loop, shared by the avx512 and avx512bf16 translation units (core
// layer, internal); simd_avx512.hpp picks vcvtneps2bf16 when compiled with AVX512_BF16.
#pragma once

#include "core/element.hpp"
#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {
namespace {

template <DType From, DType To>
void convert_rows_avx512(const void* src, void* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) simd512::store<To>(dst, i, simd512::load<From>(src, i));
  if (i < n) {
    const __mmask16 m = simd512::tail_mask(n - i);
    simd512::store_masked<To>(dst, i, simd512::load_masked<From>(src, i, m), m);
  }
}

// The one place the runtime dtypes become template parameters.
void convert_dispatch_avx512(const void* src, DType from, void* dst, DType to, std::int64_t n) {
  visit_dtype(from, [&]<DType F>() { visit_dtype(to, [&]<DType T>() { convert_rows_avx512<F, T>(src, dst, n); }); });
}

}  // namespace
}  // namespace ampkit::cpu
