// The bulk-conversion kernel list (kernels layer): a byte copy for equal dtypes, then one
// kernel per ISA, best first, reference last. Read by src/ops/convert and the tests.
#include <cstring>

#include "cpu/convert/convert_kernels.hpp"

namespace ampkit::cpu {
namespace {

const char* copy_declines(const ops::ConvertProblem& p) {
  return p.from != p.to ? "copies only: src and dst dtypes differ" : nullptr;
}

// The list's entries take the problem; the kernels keep their plain signature for other callers.
template <void (*Kernel)(const void*, DType, void*, DType, std::int64_t)>
void entry(const ops::ConvertProblem& p) {
  Kernel(p.src, p.from, p.dst, p.to, p.n);
}

}  // namespace

void convert_copy(const void* src, DType from, void* dst, DType, std::int64_t n) {
  std::memcpy(dst, src, static_cast<std::size_t>(n) * dtype_size(from));
}

std::span<const ops::ConvertEntry> convert_kernels() {
  static const ops::ConvertEntry list[] = {
      {"convert_copy", {Device::cpu, Isa::ref, false}, copy_declines, entry<convert_copy>},
      {"convert_avx512bf16", {Device::cpu, Isa::avx512, true}, nullptr, entry<convert_avx512bf16>},
      {"convert_avx512", {Device::cpu, Isa::avx512, false}, nullptr, entry<convert_avx512>},
      {"convert_avx2", {Device::cpu, Isa::avx2, false}, nullptr, entry<convert_avx2>},
      {"convert_ref", {Device::cpu, Isa::ref, false}, nullptr, entry<convert_ref>},
  };
  return list;
}

}  // namespace ampkit::cpu
