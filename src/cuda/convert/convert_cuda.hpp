// The CUDA bulk conversion (CUDA layer, internal): defined in convert_cuda.cu, listed by
// convert_cuda_kernel_list.cpp.
#pragma once

#include "ops/convert/convert_kernels.hpp"

namespace ampkit::cuda {

/// Converts p (device = cuda) on cuda:p.device_index, on the calling thread's stream.
void convert_cuda(const ops::ConvertProblem& p);

}  // namespace ampkit::cuda
