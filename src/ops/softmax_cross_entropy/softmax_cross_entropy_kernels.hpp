// The softmax cross-entropy problem (ops layer, internal): the validated problem the front end
// (src/ops/softmax_cross_entropy/) hands to a kernel, and the entry type of its kernel lists (the
// CPU's in src/cpu/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp, CUDA's in src/cuda/).
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// Forward: lse[r] = log sum_j exp(logits[r, j]); loss = mean_r (lse[r] - logits[r, targets[r]]).
/// Backward: dlogits[r, j] = dloss / rows * (exp(logits[r, j] - lse[r]) - [j == targets[r]]).
/// rows >= 1, classes >= 1; targets in [0, classes); logits and dlogits [rows, classes] with their
/// own row strides (dlogits may be exactly logits); loss, lse, targets disjoint from the outputs.
struct SoftmaxCrossEntropyProblem {
  std::int64_t rows = 0;
  std::int64_t classes = 0;
  const void* logits = nullptr;
  DType logits_dtype = DType::f32;
  std::int64_t logits_row_stride = 0;
  const std::int32_t* targets = nullptr;  // [rows]
  float* loss = nullptr;                  // forward output, one element
  float* lse = nullptr;                   // [rows]: forward output, backward input
  float dloss = 0.0f;                     // backward
  void* dlogits = nullptr;                // backward output
  DType dlogits_dtype = DType::f32;
  std::int64_t dlogits_row_stride = 0;
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
};

using SoftmaxCrossEntropyFn = void (*)(const SoftmaxCrossEntropyProblem&);
using SoftmaxCrossEntropyEntry = ops::KernelEntry<SoftmaxCrossEntropyProblem, SoftmaxCrossEntropyFn>;

}  // namespace ampkit::ops
