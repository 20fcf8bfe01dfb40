// AVX2 bulk conversion (core layer): F16C for f16, integer round-to-nearest-even for bf16.
#include "core/element.hpp"
#include "cpu/convert/convert_kernels.hpp"
#include "cpu/simd/simd_avx2.hpp"

namespace ampkit::cpu {
namespace {

template <DType From, DType To>
void convert_rows_avx2(const void* src, void* dst, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) simd256::store<To>(dst, i, simd256::load<From>(src, i));
  if (i < n) simd256::store_partial<To>(dst, i, simd256::load_partial<From>(src, i, n - i), n - i);
}

}  // namespace

void convert_avx2(const void* src, DType from, void* dst, DType to, std::int64_t n) {
  visit_dtype(from, [&]<DType F>() { visit_dtype(to, [&]<DType T>() { convert_rows_avx2<F, T>(src, dst, n); }); });
}

}  // namespace ampkit::cpu
