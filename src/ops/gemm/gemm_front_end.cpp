// The GEMM front end (ops layer): validate (gemm_validate.cpp), choose the kernel once per
// call from the one kernel list, run it, fill the report. Public entry points of gemm.hpp.
#include <new>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ops/backend.hpp"
#include "ops/gemm/gemm_kernels.hpp"

namespace ampkit {
namespace {

// A rejected call: unsupported when the call is for a GPU this process cannot use (the message
// says why), invalid_argument otherwise.
[[noreturn]] void reject(const GemmArgs& args, const std::string& message) {
  const bool no_gpu = ops::backend(args.device).unavailable() != nullptr;
  throw Error(message, no_gpu ? ErrorKind::unsupported : ErrorKind::invalid_argument);
}

std::span<const ops::GemmKernel> gemm_list(const GemmArgs& args) {
  return args.device == Device::cuda ? cuda::gemm_cuda_kernels() : cpu::gemm_kernels();
}

// The CUDA list runs the whole call, the m = 0 / n = 0 / alpha = 0 rules included (DESIGN.md
// section 4): its entries read and write device memory only.
const ops::GemmKernel& run_on_cuda(const ops::GemmProblem& problem, ops::GemmCounters& counters) {
  const ops::GemmKernel& kernel = ops::select_kernel(cuda::gemm_cuda_kernels(), problem);
  if (const char* why = ops::kernel_unavailable_reason(kernel.needs))
    throw Error(std::string("gemm: no kernel for cuda: ") + kernel.name + " " + why, ErrorKind::unsupported);
  kernel.run(problem, counters);
  return kernel;
}

// The decoded problem of a valid call; a rejected call throws.
ops::GemmProblem validated_problem(const GemmArgs& args) {
  ops::GemmProblem problem;
  const std::string message = ops::gemm_validate(args, problem);
  if (!message.empty()) reject(args, message);
  return problem;
}

}  // namespace

std::string gemm_check(const GemmArgs& args) noexcept {
  try {
    return ops::gemm_validate(args);
  } catch (...) {
    return "gemm: out of memory while validating the arguments";
  }
}

std::string gemm_descriptor_check(const GemmArgs& args) noexcept {
  try {
    return ops::gemm_validate(args, ops::Stage::descriptor);
  } catch (...) {
    return "gemm: out of memory while validating the arguments";
  }
}

const char* gemm_kernel_name(const GemmArgs& args) {
  return ops::select_kernel(gemm_list(args), validated_problem(args)).name;
}

std::vector<KernelStatus> gemm_kernel_statuses(const GemmArgs& args) {
  return ops::kernel_statuses(gemm_list(args), validated_problem(args));
}

void gemm(const GemmArgs& args, GemmReport* report) {
  ops::GemmProblem problem = validated_problem(args);
  // Only an f16 operand or output can give a non-zero count: other calls skip the counting (on
  // cuda a pass and a wait for the stream) and report zeros.
  const bool f16_output = args.d_dtype == DType::f16 || (problem.aux_out && args.epilogue.aux_dtype == DType::f16);
  problem.want_counters = report != nullptr && (problem.fp16 || f16_output);
  ops::GemmCounters counters;
  const ops::GemmKernel* kernel = nullptr;
  if (args.device == Device::cuda) {
    kernel = &run_on_cuda(problem, counters);
  } else if (args.m == 0 || args.n == 0) {
    // D and aux are empty, and the other dimension may be any size a valid call allows (up to
    // 2^62): no engine loops over it. Only a bias gradient can have elements.
    kernel = &ops::select_kernel(cpu::gemm_kernels(), problem);
    cpu::gemm_write_bias_grad_only(problem);
  } else if (args.alpha == 0.0f && args.k > 0) {
    // The BLAS rule: op(A) op(B) is not computed, D = epilogue(beta C) (the k = 0 problem);
    // BGRADA / BGRADB are defined on the operand, so they still sum it.
    GemmArgs no_product = args;
    no_product.k = 0;
    const bool operand_grad =
        problem.bias_grad == ops::GemmBiasGrad::rows_of_a || problem.bias_grad == ops::GemmBiasGrad::cols_of_b;
    if (operand_grad) no_product.epilogue.kind = Epilogue::DEFAULT;
    const ops::GemmProblem empty = ops::make_gemm_problem(no_product);
    kernel = &ops::select_kernel(cpu::gemm_kernels(), empty);
    kernel->run(empty, counters);
    if (operand_grad) cpu::gemm_write_bias_grad_only(problem);
  } else {
    kernel = &ops::select_kernel(cpu::gemm_kernels(), problem);
    kernel->run(problem, counters);
  }
  if (report != nullptr) {
    report->kernel = kernel->name;
    report->fp16 = problem.fp16;
    report->fp16_mode = args.fp16_mode;
    report->fp16_subnormal_inputs = counters.fp16_subnormal_inputs;
    report->fp16_subnormal_outputs = counters.fp16_subnormal_outputs;
  }
}

}  // namespace ampkit
