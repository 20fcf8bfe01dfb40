// The CUDA softmax cross-entropy entries (CUDA layer, internal): declared for the kernel list
// (softmax_cross_entropy_cuda_kernel_list.cpp) and the CUDA tests; defined in
// softmax_cross_entropy_cuda.cu.
#pragma once

#include "ops/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit::cuda {

void softmax_cross_entropy_forward_cuda(const ops::SoftmaxCrossEntropyProblem& p);
void softmax_cross_entropy_backward_cuda(const ops::SoftmaxCrossEntropyProblem& p);

}  // namespace ampkit::cuda
