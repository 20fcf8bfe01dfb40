// Bulk conversion front end (core layer): validates, then runs the best usable kernel.
#include "ampkit/ops/convert.hpp"

#include <cstring>

#include "ampkit/core/error.hpp"
#include "ampkit/core/tensor.hpp"
#include "cpu/convert/convert_kernels.hpp"

namespace ampkit {
namespace cpu {

std::span<const ConvertKernel> convert_kernels() {
  static const ConvertKernel kernels[] = {
      {"convert_avx512bf16", Isa::avx512, true, convert_avx512bf16},
      {"convert_avx512", Isa::avx512, false, convert_avx512},
      {"convert_avx2", Isa::avx2, false, convert_avx2},
      {"convert_ref", Isa::ref, false, convert_ref},
  };
  return kernels;
}

}  // namespace cpu

void convert(const void* src, DType src_type, void* dst, DType dst_type, std::int64_t n) {
  constexpr const char* fn = "convert";
  if (!is_float_dtype(src_type))
    fail(fn, "src_type must be f32, bf16 or f16, but got the value ", static_cast<int>(src_type));
  if (!is_float_dtype(dst_type))
    fail(fn, "dst_type must be f32, bf16 or f16, but got the value ", static_cast<int>(dst_type));
  if (n < 0) fail(fn, "n must be >= 0, but got ", n);
  if (n == 0) return;
  if (src == nullptr) fail(fn, "src is null with n = ", n);
  if (dst == nullptr) fail(fn, "dst is null with n = ", n);
  const std::int64_t src_bytes = n * static_cast<std::int64_t>(dtype_size(src_type));
  const std::int64_t dst_bytes = n * static_cast<std::int64_t>(dtype_size(dst_type));
  if (src == dst && src_type == dst_type) return;
  if (ranges_overlap(src, src_bytes, dst, dst_bytes))
    fail(fn, "dst must not overlap src (in place only with the same dtype), but they overlap");
  if (src_type == dst_type) {
    std::memcpy(dst, src, static_cast<std::size_t>(src_bytes));
    return;
  }
  for (const cpu::ConvertKernel& k : cpu::convert_kernels()) {
    if (cpu::kernel_usable(k.isa, k.needs_bf16_instructions)) {
      k.run(src, src_type, dst, dst_type, n);
      return;
    }
  }
}

}  // namespace ampkit
