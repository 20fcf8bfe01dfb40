// The AVX-512 conversion loop, shared by the avx512 and avx512bf16 translation units (core
// layer, internal); simd_avx512.hpp picks vcvtneps2bf16 when compiled with AVX512_BF16.
#pragma once

#include "core/simd_avx512.hpp"

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
  auto with_to = [&]<DType F>() {
    switch (to) {
      case DType::f32: return convert_rows_avx512<F, DType::f32>(src, dst, n);
      case DType::bf16: return convert_rows_avx512<F, DType::bf16>(src, dst, n);
      case DType::f16: return convert_rows_avx512<F, DType::f16>(src, dst, n);
    }
  };
  switch (from) {
    case DType::f32: return with_to.template operator()<DType::f32>();
    case DType::bf16: return with_to.template operator()<DType::bf16>();
    case DType::f16: return with_to.template operator()<DType::f16>();
  }
}

}  // namespace
}  // namespace ampkit::cpu
