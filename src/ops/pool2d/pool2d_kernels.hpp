// The pooling problem (ops layer, internal): the validated problem the pool2d front end
// (src/ops/pool2d/) hands to a kernel, the entry type of its kernel list (the CPU's in
// src/cpu/pool2d/pool2d_kernels.hpp; CUDA has none yet) and its prepared call.
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/pool2d.hpp"
#include "ops/kernel_registry.hpp"
#include "ops/prepared_call.hpp"

namespace ampkit::ops {

/// Forward: out = y [n, c, oh, ow] from x [n, c, h, w]. Backward: out = dx [n, c, h, w] from
/// dy [n, c, oh, ow] (and x, for the max's choice). Every operand contiguous NCHW; every dim
/// >= 1 (the front end runs no kernel for an empty problem).
struct Pool2dProblem {
  Pool2dParams params;
  bool backward = false;
  std::int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  const void* x = nullptr;
  DType x_dtype = DType::f32;
  const void* dy = nullptr;  // backward only
  DType dy_dtype = DType::f32;
  void* out = nullptr;  // y (forward) or dx (backward)
  DType out_dtype = DType::f32;
  Device device = Device::cpu;
  int device_index = 0;
};

using Pool2dFn = void (*)(const Pool2dProblem&);
using Pool2dEntry = KernelEntry<Pool2dProblem, Pool2dFn>;

using PreparedPool2d = PreparedCall<Pool2dProblem, Pool2dFn>;
PreparedPool2d prepare_pool2d_forward(const TensorView& x, const TensorView& y, const Pool2dParams& params);
PreparedPool2d prepare_pool2d_backward(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                       const Pool2dParams& params);
void run_prepared(PreparedPool2d& call);

}  // namespace ampkit::ops
