// The elementwise and row-sum kernel lists (kernels layer): best first, reference last.
// Read by src/ops/elementwise/elementwise_front_end.cpp and the tests.
#include "cpu/elementwise/elementwise_kernels.hpp"

namespace ampkit::cpu {

std::span<const ops::ElementwiseEntry> elementwise_kernels() {
  static const ops::ElementwiseEntry kernels[] = {
      {"elementwise_cpu", {Device::cpu, Isa::ref, false}, nullptr, elementwise_cpu},
      {"elementwise_reference", {Device::cpu, Isa::ref, false}, nullptr, elementwise_reference},
  };
  return kernels;
}

std::span<const ops::SumRowsEntry> sum_rows_kernels() {
  static const ops::SumRowsEntry kernels[] = {
      {"sum_rows_blocked32_cpu", {Device::cpu, Isa::ref, false}, nullptr, sum_rows_cpu},
      {"sum_rows_reference", {Device::cpu, Isa::ref, false}, nullptr, sum_rows_reference},
  };
  return kernels;
}

}  // namespace ampkit::cpu
