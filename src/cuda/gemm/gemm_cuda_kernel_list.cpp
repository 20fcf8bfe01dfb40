// The CUDA GEMM kernel list (CUDA layer), best first: the fused cuBLASLt entry, then the entry
// that takes every valid problem (cuBLASLt product + ampkit's epilogue), so the list has no hole.
// Read by the GEMM front end (src/ops/gemm) and the CUDA tests.
#include <string>

#include "ampkit/core/error.hpp"
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

// The entries run the whole call, the m = 0 / n = 0 / alpha = 0 rules included (DESIGN.md
// section 4): they read and write device memory only.
const ops::GemmKernel& gemm_call(const ops::GemmProblem& problem, ops::GemmCounters& counters) {
  const ops::GemmKernel& kernel = ops::select_kernel(gemm_cuda_kernels(), problem);
  if (const char* why = ops::kernel_unavailable_reason(kernel.needs))
    throw Error(std::string("gemm: no kernel for cuda: ") + kernel.name + " " + why, ErrorKind::unsupported);
  kernel.run(problem, counters);
  return kernel;
}

}  // namespace ampkit::cuda
