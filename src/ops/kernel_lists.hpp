// The op table (ops layer, internal): every op's kernel list, one member per list, that each
// backend fills (src/cpu/common/cpu_backend.cpp, src/cuda/runtime/cuda_backend.cpp), and
// for_each_kernel_list, the one enumeration of the ops that kernel_lists(), `ampkit info
// --kernels` and the tests read. A backend without kernels for an op leaves its list empty.
#pragma once

#include <span>

#include "ops/activation/activation_kernels.hpp"
#include "ops/attention/attention_problem.hpp"
#include "ops/conv2d/conv2d_kernels.hpp"
#include "ops/convert/convert_kernels.hpp"
#include "ops/elementwise/elementwise_kernels.hpp"
#include "ops/embedding/embedding_kernels.hpp"
#include "ops/gemm/gemm_kernels.hpp"
#include "ops/norm/norm_kernels.hpp"
#include "ops/optimizer/optimizer_kernels.hpp"
#include "ops/pool2d/pool2d_kernels.hpp"
#include "ops/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit::ops {

/// A device's lists, each best first with its reference last.
struct KernelLists {
  std::span<const GemmKernel> gemm;
  GemmCallFn gemm_call = nullptr;  // runs a whole call with `gemm` (null only in an absent backend)
  std::span<const NormForwardEntry> layer_norm_forward;
  std::span<const NormBackwardEntry> layer_norm_backward;
  std::span<const NormForwardEntry> rms_norm_forward;
  std::span<const NormBackwardEntry> rms_norm_backward;
  std::span<const ConvertEntry> convert;
  std::span<const GeluEntry> gelu;
  std::span<const ElementwiseEntry> elementwise;
  std::span<const SumRowsEntry> sum_rows;
  std::span<const SoftmaxCrossEntropyEntry> softmax_cross_entropy_forward;
  std::span<const SoftmaxCrossEntropyEntry> softmax_cross_entropy_backward;
  std::span<const AttentionForwardEntry> attention_forward;
  std::span<const AttentionBackwardEntry> attention_backward;
  std::span<const EmbeddingForwardEntry> embedding_forward;
  std::span<const EmbeddingBackwardEntry> embedding_backward;
  std::span<const Pool2dEntry> pool2d;  // forward and backward (CPU only so far)
  std::span<const AdamWEntry> adamw_step;
  std::span<const SgdEntry> sgd_step;
  std::span<const GradNormEntry> global_grad_norm;
  std::span<const AllFiniteEntry> all_finite;
  std::span<const MultiTensorEntry> multi_tensor_step;
  std::span<const Conv2dEntry> conv2d_forward;
  std::span<const Conv2dEntry> conv2d_backward_data;
  std::span<const Conv2dEntry> conv2d_backward_weight;
};

/// Calls f(op name, list) for every op of `lists`, in the order `ampkit info --kernels` prints.
template <class F>
void for_each_kernel_list(const KernelLists& lists, F&& f) {
  f("gemm", lists.gemm);
  f("layer_norm_forward", lists.layer_norm_forward);
  f("layer_norm_backward", lists.layer_norm_backward);
  f("rms_norm_forward", lists.rms_norm_forward);
  f("rms_norm_backward", lists.rms_norm_backward);
  f("convert", lists.convert);
  f("gelu", lists.gelu);
  f("elementwise (add, add_accumulate, add_row_vector, scale)", lists.elementwise);
  f("sum_rows", lists.sum_rows);
  f("softmax_cross_entropy_forward", lists.softmax_cross_entropy_forward);
  f("softmax_cross_entropy_backward", lists.softmax_cross_entropy_backward);
  f("attention_forward", lists.attention_forward);
  f("attention_backward", lists.attention_backward);
  f("embedding_forward", lists.embedding_forward);
  f("embedding_backward", lists.embedding_backward);
  f("pool2d (forward, backward)", lists.pool2d);
  f("adamw_step", lists.adamw_step);
  f("sgd_step", lists.sgd_step);
  f("global_grad_norm", lists.global_grad_norm);
  f("all_finite", lists.all_finite);
  f("multi_tensor_step", lists.multi_tensor_step);
  f("conv2d_forward", lists.conv2d_forward);
  f("conv2d_backward_data", lists.conv2d_backward_data);
  f("conv2d_backward_weight", lists.conv2d_backward_weight);
}

}  // namespace ampkit::ops
