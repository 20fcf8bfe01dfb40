// The CUDA GEMM kernel list (CUDA layer), best first: the fused cuBLASLt entry, then the entry
// that takes every valid problem (cuBLASLt product + ampkit's epilogue), so the list has no hole,
// then the reference (never reached by selection: the entry before it takes every problem).
// Read by the GEMM front end (src/ops/gemm) and the CUDA tests.
#include <string>

#include "ampkit/core/error.hpp"
#include "cuda/common/cuda_reference.hpp"
#include "cuda/gemm/gemm_cuda.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "ops/backend.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

// The reference entry (cuda_reference.hpp): the CPU reference GEMM, with the front end's m = 0,
// n = 0 and alpha = 0 rules (cpu::gemm_call_on), on host copies of the operands.
void gemm_ref_cuda(const ops::GemmProblem& p, ops::GemmCounters& counters) {
  HostStaging staging(p.args.device_index);
  ops::GemmProblem host = p;
  for_each_operand(host, [&](auto& ptr, std::size_t bytes) { staging.add(ptr, bytes); });
  staging.stage_in();
  for_each_operand(host, [&](auto& ptr, std::size_t) {
    ptr = static_cast<std::remove_reference_t<decltype(ptr)>>(staging.host(ptr));
  });
  host.args.device = Device::cpu;
  host.args.device_index = 0;
  cpu::gemm_call_on(ops::backend(Device::cpu).kernels().gemm.last(1), host, counters);
  staging.stage_out();
}

constexpr ops::GemmKernel kList[] = {
    {"gemm_cublaslt_fused_cuda", kCuda, gemm_cublaslt_fused_declines, gemm_cublaslt_fused_cuda},
    {"gemm_cublaslt_epilogue_cuda", kCuda, nullptr, gemm_cublaslt_epilogue_cuda},
    {"gemm_ref_cuda", kCuda, nullptr, gemm_ref_cuda},
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
