// The GEMM front end (kernels layer): validate (gemm_validate.cpp), choose the kernel once per
// call from the one kernel list, run it, fill the report. Public entry points of gemm.hpp.
#include <new>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/gemm.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/common/kernel_select.hpp"

namespace ampkit {
namespace cpu {

std::span<const GemmKernel> gemm_kernels() {
  static const GemmKernel kernels[] = {
      {"gemm_skinny_f32_avx512", Isa::avx512, false, GemmOperands::any, GemmShapes::skinny, gemm_run_skinny_f32_avx512},
      {"gemm_ukernel_bf16_32x12_avx512bf16", Isa::avx512, true, GemmOperands::bf16, GemmShapes::any,
       gemm_run_bf16_avx512bf16},
      {"gemm_ukernel_f32_32x12_avx512", Isa::avx512, false, GemmOperands::any, GemmShapes::any, gemm_run_f32_avx512},
      {"gemm_skinny_f32_avx2", Isa::avx2, false, GemmOperands::any, GemmShapes::skinny, gemm_run_skinny_f32_avx2},
      {"gemm_ukernel_f32_16x6_avx2", Isa::avx2, false, GemmOperands::any, GemmShapes::any, gemm_run_f32_avx2},
      {"gemm_reference", Isa::ref, false, GemmOperands::any, GemmShapes::any, gemm_reference},
  };
  return kernels;
}

bool gemm_kernel_accepts(const GemmKernel& kernel, const GemmProblem& problem) {
  if (!kernel_usable(kernel.isa, kernel.needs_bf16_instructions)) return false;
  if (kernel.shapes == GemmShapes::skinny) {
    const std::int64_t small = problem.args.m < problem.args.n ? problem.args.m : problem.args.n;
    if (small < 1 || small > gemm_skinny_max) return false;
  }
  if (kernel.operands == GemmOperands::bf16) {
    const GemmArgs& a = problem.args;
    const auto bf16_like = [&](DType t) { return t == DType::bf16 || (t == DType::f16 && problem.alt); };
    return bf16_like(a.a_dtype) && bf16_like(a.b_dtype);
  }
  return true;
}

const GemmKernel& gemm_select_kernel(const GemmProblem& problem) {
  const std::span<const GemmKernel> kernels = gemm_kernels();
  for (const GemmKernel& k : kernels)
    if (gemm_kernel_accepts(k, problem)) return k;
  return kernels.back();
}

}  // namespace cpu

std::string gemm_check(const GemmArgs& args) noexcept {
  try {
    return cpu::gemm_validate(args);
  } catch (...) {
    return "gemm: out of memory while validating the arguments";
  }
}

const char* gemm_kernel_name(const GemmArgs& args) {
  const std::string message = cpu::gemm_validate(args);
  if (!message.empty()) throw Error(message);
  return cpu::gemm_select_kernel(cpu::make_gemm_problem(args)).name;
}

void gemm(const GemmArgs& args, GemmReport* report) {
  const std::string message = cpu::gemm_validate(args);
  if (!message.empty()) throw Error(message);
  const cpu::GemmProblem problem = cpu::make_gemm_problem(args);
  const cpu::GemmKernel& kernel = cpu::gemm_select_kernel(problem);
  cpu::GemmCounters counters;
  kernel.run(problem, counters);
  if (report != nullptr) {
    report->kernel = kernel.name;
    report->fp16 = problem.fp16;
    report->fp16_mode = args.fp16_mode;
    report->fp16_subnormal_inputs = counters.fp16_subnormal_inputs;
    report->fp16_subnormal_outputs = counters.fp16_subnormal_outputs;
  }
}

}  // namespace ampkit
