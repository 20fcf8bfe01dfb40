// The GELU problem (ops layer, internal): the validated problem the activation front end
// (src/ops/activation/) hands to a kernel, and the entry type of its kernel lists (each backend's:
// the CPU's in src/cpu/activation/activation_kernels.hpp, CUDA's in src/cuda/activation/).
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// Forward: y = gelu(x). Backward: dx = dy * gelu'(x). Every operand [rows, n], last dim
/// contiguous, its own row stride; rows, n >= 1. out may be exactly dy (backward) or x (forward).
struct GeluProblem {
  std::int64_t rows = 0;
  std::int64_t n = 0;
  bool backward = false;
  GeluVariant variant = GeluVariant::tanh;
  const void* x = nullptr;
  DType x_dtype = DType::f32;
  std::int64_t x_row_stride = 0;
  const void* dy = nullptr;  // backward only
  DType dy_dtype = DType::f32;
  std::int64_t dy_row_stride = 0;
  void* out = nullptr;  // y (forward) or dx (backward)
  DType out_dtype = DType::f32;
  std::int64_t out_row_stride = 0;
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
};

using GeluFn = void (*)(const GeluProblem&);
using GeluEntry = ops::KernelEntry<GeluProblem, GeluFn>;

}  // namespace ampkit::ops
