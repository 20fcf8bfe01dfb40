// The CUDA causal attention entries (CUDA layer, internal): declared for the kernel list
// (attention_cuda_kernel_list.cpp) and the CUDA tests; defined in attention_cuda.cu.
#pragma once

#include "ops/attention/attention_problem.hpp"

namespace ampkit::cuda {

void attention_forward_cuda(const ops::AttentionForwardProblem& p);
void attention_backward_cuda(const ops::AttentionBackwardProblem& p);

}  // namespace ampkit::cuda
