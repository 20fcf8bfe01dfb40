// The CUDA backend's kernel lists (CUDA layer, internal): one function per op list, defined in
// src/cuda/<op>/*_cuda_kernel_list.cpp, read by the CUDA backend (cuda_backend.cpp) into its row
// of the op table (ops/kernel_lists.hpp). Every entry needs Device::cuda; the entries before the
// reference take every valid problem and handle empty shapes themselves (the front end never
// touches device memory); the last entry is the reference (cuda/common/cuda_reference.hpp).
#pragma once

#include <span>

#include "ops/kernel_lists.hpp"

namespace ampkit::cuda {

std::span<const ops::GemmKernel> gemm_cuda_kernels();
/// The CUDA backend's ops::GemmCallFn: the entries run every part of a call (m = 0 or n = 0,
/// alpha = 0) themselves.
const ops::GemmKernel& gemm_call(const ops::GemmProblem& problem, ops::GemmCounters& counters);
std::span<const ops::NormForwardEntry> layer_norm_fwd_cuda_kernels();
std::span<const ops::NormBackwardEntry> layer_norm_bwd_cuda_kernels();
std::span<const ops::NormForwardEntry> rms_norm_fwd_cuda_kernels();
std::span<const ops::NormBackwardEntry> rms_norm_bwd_cuda_kernels();
std::span<const ops::ConvertEntry> convert_cuda_kernels();
std::span<const ops::GeluEntry> gelu_cuda_kernels();
std::span<const ops::ElementwiseEntry> elementwise_cuda_kernels();
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_forward_cuda_kernels();
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_backward_cuda_kernels();
std::span<const ops::AttentionForwardEntry> attention_forward_cuda_kernels();
std::span<const ops::AttentionBackwardEntry> attention_backward_cuda_kernels();
std::span<const ops::EmbeddingForwardEntry> embedding_forward_cuda_kernels();
std::span<const ops::EmbeddingBackwardEntry> embedding_backward_cuda_kernels();
std::span<const ops::MultiTensorEntry> multi_tensor_step_cuda_kernels();

}  // namespace ampkit::cuda
