// The GELU kernel list (kernels layer): best first, reference last. Read by
// src/ops/activation/activation_front_end.cpp and the tests.
#include "cpu/activation/activation_kernels.hpp"

namespace ampkit::cpu {

std::span<const ops::GeluEntry> gelu_kernels() {
  static const ops::GeluEntry kernels[] = {
      {"gelu_cpu", {Device::cpu, Isa::ref, false}, nullptr, gelu_cpu},
      {"gelu_reference", {Device::cpu, Isa::ref, false}, nullptr, gelu_reference},
  };
  return kernels;
}

}  // namespace ampkit::cpu
