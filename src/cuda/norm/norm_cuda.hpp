// The CUDA LayerNorm/RMSNorm entries (CUDA layer, internal): declared for the kernel list
// (norm_cuda_kernel_list.cpp) and the CUDA tests; defined in norm_fwd_cuda.cu / norm_bwd_cuda.cu.
#pragma once

#include "ops/norm/norm_kernels.hpp"

namespace ampkit::cuda {

void layer_norm_fwd_cuda(const ops::NormForwardProblem& p);
void rms_norm_fwd_cuda(const ops::NormForwardProblem& p);
void layer_norm_bwd_cuda(const ops::NormBackwardProblem& p);
void rms_norm_bwd_cuda(const ops::NormBackwardProblem& p);

}  // namespace ampkit::cuda
