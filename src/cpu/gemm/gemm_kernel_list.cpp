// The GEMM kernel list (kernels layer): best first, the reference last, each entry with what it
// needs from the machine and why it declines a problem. Declared in src/ops/gemm/gemm_kernels.hpp;
// read by the front end (dispatch, gemm_kernel_statuses) and the tests (every entry).
#include "cpu/gemm/gemm_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr ops::KernelNeeds kAmx{Device::cpu, Isa::amx, true};
constexpr ops::KernelNeeds kAvx512Bf16{Device::cpu, Isa::avx512, true};
constexpr ops::KernelNeeds kAvx512{Device::cpu, Isa::avx512, false};
constexpr ops::KernelNeeds kAvx2{Device::cpu, Isa::avx2, false};
constexpr ops::KernelNeeds kRef{Device::cpu, Isa::ref, false};

// The bf16 micro-kernels (AVX512_BF16, AMX) multiply bf16 pairs: both operands bf16 as the mode sees them.
const char* bf16_declines(const ops::GemmProblem& problem) {
  const auto bf16_like = [&](DType t) { return t == DType::bf16 || (t == DType::f16 && problem.alt); };
  if (bf16_like(problem.args.a_dtype) && bf16_like(problem.args.b_dtype)) return nullptr;
  return "only bf16 operands (bf16, or f16 in the alt mode)";
}

}  // namespace

const char* gemm_skinny_declines(const ops::GemmProblem& problem) {
  const std::int64_t small = problem.args.m < problem.args.n ? problem.args.m : problem.args.n;
  if (small >= 1 && small <= gemm_skinny_max) return nullptr;
  return small < 1 ? "only 1 <= min(m, n): the problem is empty" : "only min(m, n) <= 16 (gemm_skinny_max)";
}

std::span<const ops::GemmKernel> gemm_kernels() {
  static const ops::GemmKernel kernels[] = {
      {"gemm_skinny_f32_avx512", kAvx512, gemm_skinny_declines, gemm_run_skinny_f32_avx512},
      {"gemm_ukernel_bf16_32x32_amx", kAmx, bf16_declines, gemm_run_bf16_amx},
      {"gemm_ukernel_bf16_32x12_avx512bf16", kAvx512Bf16, bf16_declines, gemm_run_bf16_avx512bf16},
      {"gemm_ukernel_f32_32x12_avx512", kAvx512, nullptr, gemm_run_f32_avx512},
      {"gemm_skinny_f32_avx2", kAvx2, gemm_skinny_declines, gemm_run_skinny_f32_avx2},
      {"gemm_ukernel_f32_16x6_avx2", kAvx2, nullptr, gemm_run_f32_avx2},
      {"gemm_reference", kRef, nullptr, gemm_reference},
  };
  return kernels;
}

const ops::GemmKernel& gemm_call(const ops::GemmProblem& problem, ops::GemmCounters& counters) {
  return gemm_call_on(gemm_kernels(), problem, counters);
}

const ops::GemmKernel& gemm_call_on(std::span<const ops::GemmKernel> list, const ops::GemmProblem& problem,
                                    ops::GemmCounters& counters) {
  if (ops::gemm_runs_one_entry(problem)) {  // a prepared GEMM runs these entries directly (ops::PreparedGemm)
    const ops::GemmKernel& kernel = ops::select_kernel(list, problem);
    kernel.run(problem, counters);
    return kernel;
  }
  const GemmArgs& args = problem.args;
  if (args.m == 0 || args.n == 0) {
    // D and aux are empty, and the other dimension may be any size a valid call allows (up to
    // 2^62): no engine loops over it. Only a bias gradient can have elements.
    const ops::GemmKernel& kernel = ops::select_kernel(list, problem);
    gemm_write_bias_grad_only(problem);
    return kernel;
  }
  // alpha = 0 with k >= 1, the BLAS rule: op(A) op(B) is not computed, D = epilogue(beta C) (the
  // k = 0 problem); BGRADA / BGRADB are defined on the operand, so they still sum it.
  GemmArgs no_product = args;
  no_product.k = 0;
  const bool operand_grad =
      problem.bias_grad == ops::GemmBiasGrad::rows_of_a || problem.bias_grad == ops::GemmBiasGrad::cols_of_b;
  if (operand_grad) no_product.epilogue.kind = Epilogue::DEFAULT;
  const ops::GemmProblem empty = ops::make_gemm_problem(no_product);
  const ops::GemmKernel& kernel = ops::select_kernel(list, empty);
  kernel.run(empty, counters);
  if (operand_grad) gemm_write_bias_grad_only(problem);
  return kernel;
}

}  // namespace ampkit::cpu
