// The bulk-conversion problem (ops layer, internal): the validated problem src/ops/convert hands to
// a kernel and the entry type of its kernel lists (the CPU's in src/cpu/convert/convert_kernels.hpp,
// CUDA's in src/cuda/convert/). Read by the front end, the backends and the tests.
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/device/cpu.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// A conversion after validation: n >= 0 elements, src and dst not overlapping (or identical
/// with from == to), both non-null when n > 0.
struct ConvertProblem {
  const void* src = nullptr;
  DType from = DType::f32;
  void* dst = nullptr;
  DType to = DType::f32;
  std::int64_t n = 0;
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
};

/// Converts p.n elements from p.src (dtype p.from) to p.dst (dtype p.to); any pair of
/// f32/bf16/f16. The entry takes the whole problem, so a GPU entry knows its device.
using ConvertFn = void (*)(const ConvertProblem& p);
using ConvertEntry = ops::KernelEntry<ConvertProblem, ConvertFn>;

}  // namespace ampkit::ops
