// The GEMM front end (ops layer): validate (gemm_validate.cpp) into a prepared call
// (ops::PreparedGemm), choose the kernel once from the one kernel list, run it, fill the report.
// Public entry points of gemm.hpp; gemm() is prepare + one run.
#include <new>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ops/backend.hpp"
#include "ops/gemm/gemm_kernels.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit {
namespace {

// A rejected call: unsupported when the call is for a GPU this process cannot use (the message
// says why), invalid_argument otherwise.
[[noreturn]] void reject(const GemmArgs& args, const std::string& message) {
  const bool no_gpu = ops::backend(args.device).unavailable() != nullptr;
  throw Error(message, no_gpu ? ErrorKind::unsupported : ErrorKind::invalid_argument);
}

std::span<const ops::GemmKernel> gemm_list(const GemmArgs& args) { return ops::backend(args.device).kernels().gemm; }

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

namespace ops {

PreparedGemm prepare_gemm(const GemmArgs& args, bool want_report) {
  PreparedGemm g;
  ops::GemmProblem problem = validated_problem(args);
  // Only an f16 operand or output can give a non-zero count: other calls skip the counting (on
  // cuda a pass and a wait for the stream) and report zeros.
  const bool f16_output = args.d_dtype == DType::f16 || (problem.aux_out && args.epilogue.aux_dtype == DType::f16);
  problem.want_counters = want_report && (problem.fp16 || f16_output);
  const ops::KernelLists& lists = ops::backend(args.device).kernels();
  g.call = PreparedCall<GemmProblem, GemmRunFn>("gemm", lists.gemm, problem);
  g.whole_call = lists.gemm_call;
  return g;
}

void run_prepared(PreparedGemm& g, GemmReport* report) {
  const GemmProblem& problem = g.call.problem();
  ops::GemmCounters counters;
  // The backend's whole call is select + run here (both backends), so the prepared entry runs;
  // otherwise the backend applies the m = 0, n = 0 and alpha = 0 rules around its entries (the
  // CPU's) or its entries apply them themselves (CUDA's).
  const ops::GemmKernel* kernel = nullptr;
  if (ops::gemm_runs_one_entry(problem)) {
    kernel = &g.call.entry();
    kernel->run(problem, counters);
  } else {
    kernel = &g.whole_call(problem, counters);
  }
  if (report != nullptr) {
    report->kernel = kernel->name;
    report->fp16 = problem.fp16;
    report->fp16_mode = problem.args.fp16_mode;
    report->fp16_subnormal_inputs = counters.fp16_subnormal_inputs;
    report->fp16_subnormal_outputs = counters.fp16_subnormal_outputs;
  }
}

}  // namespace ops

void gemm(const GemmArgs& args, GemmReport* report) {
  ops::PreparedGemm g = ops::prepare_gemm(args, report != nullptr);
  ops::run_prepared(g, report);
}

}  // namespace ampkit
