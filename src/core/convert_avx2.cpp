// AVX2 bulk conversion (core layer): F16C for f16, integer round-to-nearest-even for bf16.
#include "core/convert_kernels.hpp"
#include "core/simd_avx2.hpp"

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
  auto with_to = [&]<DType F>() {
    switch (to) {
      case DType::f32: return convert_rows_avx2<F, DType::f32>(src, dst, n);
      case DType::bf16: return convert_rows_avx2<F, DType::bf16>(src, dst, n);
      case DType::f16: return convert_rows_avx2<F, DType::f16>(src, dst, n);
    }
  };
  switch (from) {
    case DType::f32: return with_to.template operator()<DType::f32>();
    case DType::bf16: return with_to.template operator()<DType::bf16>();
    case DType::f16: return with_to.template operator()<DType::f16>();
  }
}

}  // namespace ampkit::cpu
