// The LayerNorm/RMSNorm problems (ops layer, internal): the validated problems the front end hands
// to a kernel and the entry types of the four kernel lists (layer/rms, forward/backward; the CPU's
// in src/cpu/norm/norm_kernels.hpp, CUDA's in src/cuda/norm/). Read by src/ops/norm (validation,
// dispatch, kernel_name, kernel_statuses), the backends and the tests.
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/device/cpu.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// A forward call after validation. rows >= 1, n >= 1, x and y non-null and not overlapping
/// anything; gamma/beta/mean/rstd null when absent (beta and mean always null for RMSNorm).
struct NormForwardProblem {
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
  std::int64_t rows = 0;
  std::int64_t n = 0;
  const void* x = nullptr;      // [rows, n], x_dtype
  DType x_dtype = DType::f32;   // also y's dtype
  const void* gamma = nullptr;  // [n], param_dtype
  const void* beta = nullptr;   // [n], param_dtype
  DType param_dtype = DType::f32;
  float eps = 0.0f;
  void* y = nullptr;      // [rows, n], x_dtype
  float* mean = nullptr;  // [rows]
  float* rstd = nullptr;  // [rows]
};

/// A backward call after validation. rows >= 1, n >= 1, at least one of dx/dgamma/dbeta present,
/// dy non-null; x, rstd (and mean for LayerNorm) non-null when dx or dgamma is present; gamma
/// non-null when dgamma is present. gamma, dgamma and dbeta share param_dtype.
struct NormBackwardProblem {
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
  std::int64_t rows = 0;
  std::int64_t n = 0;
  const void* dy = nullptr;     // [rows, n], x_dtype
  const void* x = nullptr;      // [rows, n], x_dtype
  DType x_dtype = DType::f32;   // also dx's dtype
  const float* mean = nullptr;  // [rows]
  const float* rstd = nullptr;  // [rows]
  const void* gamma = nullptr;  // [n], param_dtype (absent: 1)
  DType param_dtype = DType::f32;
  void* dx = nullptr;       // [rows, n], x_dtype
  void* dgamma = nullptr;   // [n], param_dtype
  void* dbeta = nullptr;    // [n], param_dtype
  bool accumulate = false;  // dgamma/dbeta += instead of =
};

using NormForwardFn = void (*)(const NormForwardProblem&);
using NormBackwardFn = void (*)(const NormBackwardProblem&);

/// Entries of the four kernel lists (src/ops/kernel_registry.hpp). Every entry supports every
/// dtype mix and shape, so no entry declines a valid problem; they differ only in what the
/// machine must have.
using NormForwardEntry = ops::KernelEntry<NormForwardProblem, NormForwardFn>;
using NormBackwardEntry = ops::KernelEntry<NormBackwardProblem, NormBackwardFn>;

}  // namespace ampkit::ops
