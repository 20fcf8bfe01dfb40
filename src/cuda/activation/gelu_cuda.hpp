// The CUDA GELU entry (CUDA layer, internal): declared for the kernel list
// (gelu_cuda_kernel_list.cpp) and the CUDA tests; defined in gelu_cuda.cu.
#pragma once

#include "ops/activation/activation_kernels.hpp"

namespace ampkit::cuda {

void gelu_cuda(const ops::GeluProblem& p);

}  // namespace ampkit::cuda
