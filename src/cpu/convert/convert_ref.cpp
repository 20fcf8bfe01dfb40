// Reference bulk conversion (core layer): the scalar conversions of float16.hpp, one element at
// a time. The vector kernels must match it bit for bit.
#include <cstdint>

#include "core/element.hpp"
#include "cpu/convert/convert_kernels.hpp"

namespace ampkit::cpu {

void convert_ref(const void* src, DType from, void* dst, DType to, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) store_element(dst, to, i, load_element(src, from, i));
}

}  // namespace ampkit::cpu
