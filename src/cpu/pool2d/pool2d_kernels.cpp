// The pooling kernel list (kernels layer): best first, reference last. Read by the CPU
// backend's op table and the tests.
#include "cpu/pool2d/pool2d_kernels.hpp"

namespace ampkit::cpu {

std::span<const ops::Pool2dEntry> pool2d_kernels() {
  static const ops::Pool2dEntry kernels[] = {
      {"pool2d_cpu", {Device::cpu, Isa::ref, false}, nullptr, pool2d_cpu},
      {"pool2d_reference", {Device::cpu, Isa::ref, false}, nullptr, pool2d_reference},
  };
  return kernels;
}

}  // namespace ampkit::cpu
