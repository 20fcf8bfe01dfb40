// `ampkit check kernels` (tools/ampkit/check/): the quick run exits 0 with a passing row for every
// op of every kernel family, each naming a kernel of that op's list; and the comparison can fail:
// Deviation / record flag a result perturbed beyond its error bound (error_bounds.hpp), a NaN on
// one side, or any difference where the bound is 0 — and pass one just inside it.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ampkit/device/cpu.hpp"
#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "cpu/convert/convert_kernels.hpp"
#include "tools/ampkit/check/check_result.hpp"
#include "tools/ampkit/check/check_tensor.hpp"

namespace ampkit::tools {
namespace {

// Every op `check kernels` reports and the kernel_lists() op whose entries may run it.
const std::map<std::string, std::string> kOps = {
    {"gemm", "gemm"},
    {"layer_norm_forward", "layer_norm_forward"},
    {"layer_norm_backward", "layer_norm_backward"},
    {"rms_norm_forward", "rms_norm_forward"},
    {"rms_norm_backward", "rms_norm_backward"},
    {"gelu_forward", "gelu"},
    {"gelu_backward", "gelu"},
    {"attention_forward", "attention_forward"},
    {"attention_backward", "attention_backward"},
    {"convert", "convert"},
    {"add", "elementwise (add, add_accumulate, add_row_vector, scale)"},
    {"add_accumulate", "elementwise (add, add_accumulate, add_row_vector, scale)"},
    {"add_row_vector", "elementwise (add, add_accumulate, add_row_vector, scale)"},
    {"scale", "elementwise (add, add_accumulate, add_row_vector, scale)"},
    {"sum_rows", "sum_rows"},
    {"embedding_forward", "embedding_forward"},
    {"embedding_backward", "embedding_backward"},
    {"adamw_step", "adamw_step"},
    {"sgd_step", "sgd_step"},
    {"global_grad_norm", "global_grad_norm"},
    {"all_finite", "all_finite"},
    {"softmax_cross_entropy_forward", "softmax_cross_entropy_forward"},
    {"softmax_cross_entropy_backward", "softmax_cross_entropy_backward"},
};

TEST(CheckKernels, QuickRunPassesWithARowForEveryOpOfEveryFamily) {
  // The ISA this run of the suite tests (AMPKIT_ISA in CI); the reference side always runs too.
  const std::string isa(isa_name(active_isa()));
  const std::string command = std::string(AMPKIT_CLI_PATH) + " check kernels --quick --isa " + isa + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  std::map<std::string, std::set<std::string>> listed;  // kernel_lists() op -> entry names
  for (const KernelList& list : kernel_lists())
    for (const KernelStatus& k : list.kernels) listed[list.op].insert(k.name);
  std::set<std::string> seen;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream row(line);
    std::string op, row_isa, kernel, verdict;
    int cases = 0, failed = -1;
    double worst = 0.0;
    if (!(row >> op >> row_isa >> kernel >> cases >> failed >> worst >> verdict) || !kOps.count(op)) continue;
    EXPECT_EQ(row_isa, isa) << line;
    EXPECT_GT(cases, 0) << line;
    EXPECT_EQ(failed, 0) << line;
    EXPECT_LE(worst, 1.0) << line;
    EXPECT_EQ(verdict, "ok") << line;
    EXPECT_TRUE(listed[kOps.at(op)].count(kernel)) << "the row names a kernel outside " << op << "'s list: " << line;
    seen.insert(op);
  }
  for (const auto& [op, list] : kOps) EXPECT_TRUE(seen.count(op)) << "no row for " << op << "\n" << output;
}

// One GEMM output element as the check compares it: k = 64, s = sum|a b| = 10, bf16 output.
double gemm_tolerance(double ref) {
  namespace eb = error_bounds;
  const double s = 10.0;
  const double err = eb::gemm_activation(eb::GemmActivationBound::none, eb::gemm_accumulation(64, s), s);
  return eb::gemm_output(err, ref, DType::bf16, false);
}

TEST(CheckKernels, ComparisonFlagsAResultBeyondItsBound) {
  const double ref = 1.75, tol = gemm_tolerance(ref);
  ASSERT_GT(tol, 0.0);
  check::CheckResults results;
  check::Deviation inside, outside;
  inside.add(ref + 0.99 * tol, ref, tol);
  outside.add(ref - 1.01 * tol, ref, tol);
  EXPECT_TRUE(inside.ok());
  EXPECT_FALSE(outside.ok());
  EXPECT_NEAR(outside.ratio, 1.01, 1e-9);
  check::record(results, "gemm", "k", "inside", {{"D", inside}});
  check::record(results, "gemm", "k", "outside", {{"D", outside}, {"aux", inside}});
  const check::CheckResult& r = results.at({"gemm", "k"});
  EXPECT_EQ(r.cases, 2);
  EXPECT_EQ(r.failed, 1);
  EXPECT_NEAR(r.worst, 1.01, 1e-9);
  EXPECT_NE(r.first_failure.find("outside: D off by"), std::string::npos) << r.first_failure;
  // A bf16 result 4 ulps off (a kernel that lost bits) is outside; a 1-ulp rounding difference is not.
  check::CheckTensor out(DType::bf16, 2);
  out.set(0, ref + 4 * 0x1p-7), out.set(1, ref + 0x1p-7);
  check::Deviation four_ulps, one_ulp;
  four_ulps.add(out.get(0), ref, tol);
  one_ulp.add(out.get(1), ref, tol);
  EXPECT_FALSE(four_ulps.ok()) << four_ulps.ratio;
  EXPECT_TRUE(one_ulp.ok()) << one_ulp.ratio;
}

TEST(CheckKernels, ComparisonFlagsNaNsAndAnyDifferenceWhereTheBoundIsZero) {
  check::Deviation nan_got, nan_both, unwritten, exact, exact_off, inf_off, zero_sign, zero_sign_tolerated;
  nan_got.add(NAN, 1.0, 1.0);
  nan_both.add(NAN, NAN, 1.0);
  check::CheckTensor poisoned(DType::f16, 1);
  poisoned.poison();  // an output the kernel left unwritten
  unwritten.add(poisoned.get(0), 0.5, 1e9);
  exact.add(INFINITY, INFINITY, 0.0);
  exact_off.add(1.0, std::nextafter(1.0f, 2.0f), 0.0);
  inf_off.add(1.0, INFINITY, INFINITY);
  zero_sign.add(-0.0, 0.0, 0.0);
  zero_sign_tolerated.add(-0.0, 0.0, 1e-30);
  EXPECT_FALSE(nan_got.ok());
  EXPECT_TRUE(nan_both.ok());
  EXPECT_FALSE(unwritten.ok());
  EXPECT_TRUE(exact.ok());
  EXPECT_FALSE(exact_off.ok());
  EXPECT_FALSE(inf_off.ok());
  EXPECT_FALSE(zero_sign.ok());
  EXPECT_TRUE(zero_sign_tolerated.ok());
  check::CheckResults results;
  check::record(results, "convert", "convert_ref", "n 1 f32 -> f16", {{"dst", nan_got}});
  EXPECT_NE(results.begin()->second.first_failure.find("NaN where the reference is not"), std::string::npos);
}

}  // namespace
}  // namespace ampkit::tools
