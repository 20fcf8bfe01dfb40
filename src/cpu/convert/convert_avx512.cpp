// AVX-512 bulk conversion (core layer): integer round-to-nearest-even for bf16, vcvtps2ph for f16.
#include "cpu/convert/convert_avx512_impl.hpp"
#include "cpu/convert/convert_kernels.hpp"

namespace ampkit::cpu {
void convert_avx512(const void* src, DType from, void* dst, DType to, std::int64_t n) {
  convert_dispatch_avx512(src, from, dst, to, n);
}
}  // namespace ampkit::cpu
