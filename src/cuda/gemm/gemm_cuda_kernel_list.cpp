// The CUDA GEMM kernel list (CUDA layer), best first: the fused cuBLASLt entry, then the entry
// that takes every valid problem (cuBLASLt product + ampkit's epilogue), so the list has no hole.
// Read by the GEMM front end (src/ops/gemm) and the CUDA tests.
#include "cuda/gemm/gemm_cuda.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

constexpr ops::GemmKernel kList[] = {
    {"gemm_cublaslt_fused_cuda", kCuda, gemm_cublaslt_fused_declines, gemm_cublaslt_fused_cuda},
    {"gemm_cublaslt_epilogue_cuda", kCuda, nullptr, gemm_cublaslt_epilogue_cuda},
};

}  // namespace

std::span<const ops::GemmKernel> gemm_cuda_kernels() { return kList; }

}  // namespace ampkit::cuda
