// The CUDA elementwise entry (CUDA layer, internal): declared for the kernel list
// (elementwise_cuda_kernel_list.cpp) and the CUDA tests; defined in elementwise_cuda.cu.
#pragma once

#include "ops/elementwise/elementwise_kernels.hpp"

namespace ampkit::cuda {

void elementwise_cuda(const ops::ElementwiseProblem& p);

}  // namespace ampkit::cuda
