// AVX-512 bulk conversion with AVX512_BF16 (core layer): vcvtneps2bf16 for f32 -> bf16.
#include "cpu/convert/convert_avx512_impl.hpp"
#include "cpu/convert/convert_kernels.hpp"

namespace ampkit::cpu {
void convert_avx512bf16(const void* src, DType from, void* dst, DType to, std::int64_t n) {
  convert_dispatch_avx512(src, from, dst, to, n);
}
}  // namespace ampkit::cpu
