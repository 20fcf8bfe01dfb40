// The CUDA multi-tensor step (CUDA layer, internal): declared for the kernel list
// (optimizer_cuda_kernel_list.cpp) and the CUDA tests; defined in optimizer_cuda.cu.
#pragma once

#include "ops/optimizer/optimizer_kernels.hpp"

namespace ampkit::cuda {

/// One stage of ops::MultiTensorProblem on the calling thread's stream of p.device_index,
/// enqueued only (nothing waits): accumulate and the updates one launch each over every
/// parameter's 4096-element chunks, decide two launches (the chunks' sums of squares, then the
/// fixed-order total and the decision in one thread).
void multi_tensor_step_cuda(const ops::MultiTensorProblem& p);

}  // namespace ampkit::cuda
