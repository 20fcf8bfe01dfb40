// The CUDA embedding entries (CUDA layer, internal): declared for the kernel list
// (embedding_cuda_kernel_list.cpp) and the CUDA tests; defined in embedding_cuda.cu.
#pragma once

#include "ops/embedding/embedding_kernels.hpp"

namespace ampkit::cuda {

void embedding_forward_cuda(const ops::EmbeddingForwardProblem& p);
void embedding_backward_cuda(const ops::EmbeddingBackwardProblem& p);

}  // namespace ampkit::cuda
