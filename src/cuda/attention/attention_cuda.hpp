// The CUDA causal attention entries (CUDA layer, internal): declared for the kernel list
// (attention_cuda_kernel_list.cpp) and the CUDA tests; defined in attention_cuda.cu (plain)
// and flash_attention_cuda.cu (tensor cores).
#pragma once

#include "ops/attention/attention_problem.hpp"

namespace ampkit::cuda {

void attention_forward_cuda(const ops::AttentionForwardProblem& p);
void attention_backward_cuda(const ops::AttentionBackwardProblem& p);

// The flash kernels (flash_attention_cuda.cu): bf16 / f16 q, k, v (and dout) at head dims 32, 64,
// 128, 16-byte aligned rows; the declines say why another problem goes to the plain kernel.
const char* attention_forward_flash_declines(const ops::AttentionForwardProblem& p);
const char* attention_backward_flash_declines(const ops::AttentionBackwardProblem& p);
void attention_forward_flash(const ops::AttentionForwardProblem& p);
void attention_backward_flash(const ops::AttentionBackwardProblem& p);

}  // namespace ampkit::cuda
