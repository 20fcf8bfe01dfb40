// The softmax cross-entropy kernel lists (kernels layer, internal): the validated problems the
// front end (src/ops/softmax_cross_entropy/) hands to a kernel, the kernels, and one list per
// direction, best first, reference last. Read by the front end and the tests.
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

namespace ampkit::cpu {

/// Classes per block of the row sum of exponentials: fp32 partials of kSoftmaxBlock classes,
/// added in block order. Fixed, so the result never depends on the thread count.
inline constexpr std::int64_t kSoftmaxBlock = 256;

/// fp32 math (gemm_math::exp_f32), OpenMP over rows, the mean over rows in fp64 in row order.
void softmax_cross_entropy_forward_cpu(const ops::SoftmaxCrossEntropyProblem& p);
void softmax_cross_entropy_backward_cpu(const ops::SoftmaxCrossEntropyProblem& p);
/// Double math, one rounding per output.
void softmax_cross_entropy_forward_reference(const ops::SoftmaxCrossEntropyProblem& p);
void softmax_cross_entropy_backward_reference(const ops::SoftmaxCrossEntropyProblem& p);
/// The mean loss in double without rounding (the reference forward rounds it once; the tests take
/// finite differences of it).
double softmax_cross_entropy_loss_reference(const ops::SoftmaxCrossEntropyProblem& p);

/// Best first, reference last.
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_forward_kernels();
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_backward_kernels();

}  // namespace ampkit::cpu
