// Reference bulk conversion (core layer): the scalar conversions of float16.hpp, one element at
// a time. The vector kernels must match it bit for bit.
#include <cstdint>

#include "ampkit/float16.hpp"
#include "core/convert_kernels.hpp"

namespace ampkit::cpu {

void convert_ref(const void* src, DType from, void* dst, DType to, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    float v = 0.0f;
    switch (from) {
      case DType::f32: v = static_cast<const float*>(src)[i]; break;
      case DType::bf16: v = bf16_bits_to_float(static_cast<const std::uint16_t*>(src)[i]); break;
      case DType::f16: v = half_bits_to_float(static_cast<const std::uint16_t*>(src)[i]); break;
    }
    switch (to) {
      case DType::f32: static_cast<float*>(dst)[i] = v; break;
      case DType::bf16: static_cast<std::uint16_t*>(dst)[i] = float_to_bf16_bits(v); break;
      case DType::f16: static_cast<std::uint16_t*>(dst)[i] = float_to_half_bits(v); break;
    }
  }
}

}  // namespace ampkit::cpu
