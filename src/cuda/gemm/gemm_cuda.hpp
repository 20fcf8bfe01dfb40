// The CUDA GEMM entries (CUDA layer, internal): declared for gemm_cuda_kernel_list.cpp and the
// CUDA tests, defined in gemm_cuda.cpp.
#pragma once

#include "ops/gemm/gemm_kernels.hpp"

namespace ampkit::cuda {

/// Why the fused entry leaves a problem to the general one (static string), or nullptr.
const char* gemm_cublaslt_fused_declines(const ops::GemmProblem& problem);

/// cuBLASLt with its own epilogue, for the epilogues it implements exactly.
void gemm_cublaslt_fused_cuda(const ops::GemmProblem& problem, ops::GemmCounters& counters);
/// cuBLASLt's fp32 product, then ampkit's epilogue and bias-gradient kernels: every problem.
void gemm_cublaslt_epilogue_cuda(const ops::GemmProblem& problem, ops::GemmCounters& counters);

}  // namespace ampkit::cuda
