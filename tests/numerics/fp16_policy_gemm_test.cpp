// Policy-level tests of fp16 GEMMs: the DESIGN.md table (env x pass x device model) through
// gemm_with_policy with several epilogues and operand layouts, checking the resolved mode, the
// mode the GEMM reports and the numbers it produced; worker threads following the caller; the
// counters; and gradient-sized GEMMs where `flush` loses the result and `alt` keeps it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/float16.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/ops/gemm.hpp"
#include "numerics/policy_test_support.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;
using testing::kGemmEnv;
using testing::kModelEnv;
using testing::PolicyEnvScope;

// ---------------------------------------------------------------------------------------------
// The mode probe: an fp16 GEMM whose result differs in every element between the three modes,
// with every intermediate exact in fp32 (so the expected values are exact, in any summation
// order). Column j of B is scaled by a power of two s_j (or -1).
//   op(A)(i, p) = 1 + 2^-9  (p < 32)   -> bf16 rounds it to 1 (2^-9 < half a bf16 ulp)
//               = 2^-20     (p >= 32)  -> an fp16 subnormal: flush reads 0, bf16 keeps it
//   op(B)(p, j) = s_j (p < 32), 2^10 s_j (p >= 32)
//   D(i, j) / s_j = exact 32 + 2^-4 + 2^-5 = 32.09375, flush 32.0625, alt 32.03125.
constexpr std::int64_t kProbeK = 64;
constexpr int kProbeSubnormalPerRow = 32;

double probe_scale(std::int64_t j) {
  constexpr double kScales[] = {1.0, 2.0, 0.5, -1.0};
  return kScales[j % 4];
}

double probe_value(Fp16Mode mode) {
  switch (mode) {
    case Fp16Mode::exact: return 32.09375;
    case Fp16Mode::flush: return 32.0625;
    case Fp16Mode::alt: return 32.03125;
  }
  return 0.0;
}

struct Probe {
  std::int64_t m, n;
  Op op_a, op_b;
  Buffer a, b;
  std::int64_t lda, ldb;
};

Probe make_probe(std::int64_t m, std::int64_t n, Op op_a, Op op_b, DType b_dtype) {
  Probe p{m, n, op_a, op_b, {}, {}, 0, 0};
  p.lda = op_a == Op::N ? m + 1 : kProbeK;  // padded leading dimension for N
  p.ldb = op_b == Op::N ? kProbeK : n + 3;
  p.a = Buffer(DType::f16, p.lda * (op_a == Op::N ? kProbeK : m));
  p.b = Buffer(b_dtype, p.ldb * (op_b == Op::N ? n : kProbeK));
  p.a.poison();  // padding stays NaN: a kernel reading it would show
  p.b.poison();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < kProbeK; ++q)
      p.a.set(op_a == Op::N ? i + q * p.lda : q + i * p.lda, q < 32 ? 1.0 + 0x1p-9 : 0x1p-20);
  for (std::int64_t q = 0; q < kProbeK; ++q)
    for (std::int64_t j = 0; j < n; ++j)
      p.b.set(op_b == Op::N ? q + j * p.ldb : j + q * p.ldb, (q < 32 ? 1.0 : 1024.0) * probe_scale(j));
  return p;
}

GemmArgs probe_args(Probe& p, Buffer& d) {
  GemmArgs args;
  args.op_a = p.op_a;
  args.op_b = p.op_b;
  args.m = p.m;
  args.n = p.n;
  args.k = kProbeK;
  args.a = p.a.data();
  args.a_dtype = DType::f16;
  args.lda = p.lda;
  args.b = p.b.data();
  args.b_dtype = p.b.dtype;
  args.ldb = p.ldb;
  args.d = d.data();
  args.d_dtype = d.dtype;
  args.ldd = p.m;
  // A mode the policy must replace whenever it matters: the opposite of what most rows expect.
  args.fp16_mode = Fp16Mode::flush;
  return args;
}

// One epilogue configuration of the table test, with the buffers it needs and how the numbers
// it produced reveal the mode.
struct EpilogueCase {
  Epilogue kind;
  const char* name;
};

constexpr EpilogueCase kEpilogues[] = {
    {Epilogue::DEFAULT, "DEFAULT"},         {Epilogue::BIAS, "BIAS"},
    {Epilogue::RELU_BIAS, "RELU_BIAS"},     {Epilogue::GELU_AUX_BIAS, "GELU_AUX_BIAS"},
    {Epilogue::DGELU_BGRAD, "DGELU_BGRAD"}, {Epilogue::BGRADB, "BGRADB"},
};

// Runs the probe with gemm_with_policy and checks that the report, the counters and every
// number follow `expected`.
void run_probe_and_check(Probe& p, DType d_dtype, const EpilogueCase& e, Fp16Mode expected) {
  SCOPED_TRACE(::testing::Message() << "epilogue " << e.name << " D " << dtype_name(d_dtype) << " B "
                                    << dtype_name(p.b.dtype) << " op_a " << (p.op_a == Op::N ? "N" : "T") << " op_b "
                                    << (p.op_b == Op::N ? "N" : "T"));
  const std::int64_t m = p.m, n = p.n;
  Buffer d(d_dtype, m * n);
  d.poison();
  GemmArgs args = probe_args(p, d);
  std::vector<float> bias(static_cast<std::size_t>(m), 1.0f);
  std::vector<float> bias_grad(static_cast<std::size_t>(std::max(m, n)), NAN);
  std::vector<float> aux(static_cast<std::size_t>(m * n), NAN);
  args.epilogue.kind = e.kind;
  args.epilogue.bias_dtype = DType::f32;
  args.epilogue.aux_dtype = DType::f32;
  args.epilogue.aux_ld = m;
  const bool with_bias = e.kind == Epilogue::BIAS || e.kind == Epilogue::RELU_BIAS || e.kind == Epilogue::GELU_AUX_BIAS;
  if (with_bias) args.epilogue.bias = bias.data();
  if (e.kind == Epilogue::GELU_AUX_BIAS) args.epilogue.aux = aux.data();
  if (e.kind == Epilogue::DGELU_BGRAD) {
    // gelu'(10) == 1 in fp32 (tanh(...) == 1, and the x * sech^2 term underflows to 0).
    std::fill(aux.begin(), aux.end(), 10.0f);
    args.epilogue.aux = aux.data();
  }
  if (e.kind == Epilogue::DGELU_BGRAD || e.kind == Epilogue::BGRADB) args.epilogue.bias_grad = bias_grad.data();

  const Fp16Counters before = fp16_counters();
  GemmReport report;
  gemm_with_policy(args, &report);
  EXPECT_TRUE(report.fp16);
  EXPECT_EQ(report.fp16_mode, expected) << fp16_mode_name(report.fp16_mode);
  EXPECT_EQ(report.fp16_subnormal_inputs, m * kProbeSubnormalPerRow);
  const Fp16Counters after = fp16_counters();
  EXPECT_EQ(after[expected].gemm_calls, before[expected].gemm_calls + 1);
  EXPECT_EQ(after[expected].subnormal_inputs, before[expected].subnormal_inputs + m * kProbeSubnormalPerRow);
  EXPECT_EQ(after.gemm_calls(), before.gemm_calls() + 1);

  // Every pre-activation value is exact in fp32 and in fp16 (see the probe's comment).
  const double v = probe_value(expected);
  const double add = with_bias ? 1.0 : 0.0;
  for (std::int64_t j = 0; j < n; ++j) {
    const double x = v * probe_scale(j) + add;
    for (std::int64_t i = 0; i < m; ++i) {
      const double got = d.get(i + j * m);
      if (e.kind == Epilogue::RELU_BIAS) {
        ASSERT_EQ(got, std::max(x, 0.0)) << "i " << i << " j " << j;
      } else if (e.kind == Epilogue::GELU_AUX_BIAS) {
        ASSERT_EQ(aux[static_cast<std::size_t>(i + j * m)], x) << "aux i " << i << " j " << j;
        ASSERT_FALSE(std::isnan(got));  // gelu of it: the GEMM's own tests check the formula
      } else {
        ASSERT_EQ(got, x) << "i " << i << " j " << j;
      }
    }
  }
  if (e.kind == Epilogue::DGELU_BGRAD) {
    // bias_grad(i) = sum over the n columns of the fp32 values. The sum is exact in fp32; the
    // tolerance only allows gelu'(10) to be a few fp32 ulps off 1 (2^-20 relative), far below
    // the gap between two modes' sums (2^-5 / 32.1 = 1e-3 relative).
    double row_sum = 0.0, row_abs = 0.0;
    for (std::int64_t j = 0; j < n; ++j) {
      row_sum += v * probe_scale(j);
      row_abs += std::fabs(v * probe_scale(j));
    }
    for (std::int64_t i = 0; i < m; ++i)
      EXPECT_NEAR(bias_grad[static_cast<std::size_t>(i)], row_sum, 0x1p-20 * row_abs) << "bias_grad " << i;
  }
}

TEST(Fp16PolicyGemm, TableThroughGemmWithPolicy) {
  PolicyEnvScope scope;
  struct EnvCase {
    const char* value;
    AltImplChoice choice;
  };
  const EnvCase cases[] = {{nullptr, AltImplChoice::per_pass},
                           {"1", AltImplChoice::alternate},
                           {"0", AltImplChoice::original},
                           {"2", AltImplChoice::alternate}};
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope isa_scope(isa);
    for (const EnvCase& env : cases) {
      for (const char* model_env : {"cpu", "mi200"}) {
        PolicyEnvScope::set(kGemmEnv, env.value);
        PolicyEnvScope::set(kModelEnv, model_env);
        const bool mi200 = std::string(model_env) == "mi200";
        for (bool backward : {false, true}) {
          SCOPED_TRACE(::testing::Message()
                       << "isa " << isa_name(isa) << " " << kGemmEnv << "=" << (env.value ? env.value : "(unset)")
                       << " " << kModelEnv << "=" << model_env << (backward ? " backward" : " forward"));
          BackwardPassGuard pass(backward);
          // Expected from DESIGN.md's table, spelled out here.
          const Fp16Mode original = mi200 ? Fp16Mode::flush : Fp16Mode::exact;
          const Fp16Mode expected = env.choice == AltImplChoice::alternate  ? Fp16Mode::alt
                                    : env.choice == AltImplChoice::original ? original
                                                                            : (backward ? Fp16Mode::alt : original);
          ASSERT_EQ(gemm_fp16_mode(), expected);
          int layout = 0;
          for (const EpilogueCase& e : kEpilogues) {
            // Rotate operand layouts and dtypes over the epilogues (all combinations would only
            // retest the GEMM; the policy is the same for each).
            const Op op_a = (layout & 1) ? Op::T : Op::N;
            const Op op_b = (layout & 2) ? Op::T : Op::N;
            const DType b_dtype = (layout % 3 == 2) ? DType::bf16 : DType::f16;
            const DType d_dtype = (layout % 2 == 1) ? DType::f32 : DType::f16;
            ++layout;
            Probe p = make_probe(5, 7, op_a, op_b, b_dtype);
            run_probe_and_check(p, d_dtype, e, expected);
          }
        }
      }
    }
  }
}

TEST(Fp16PolicyGemm, ApiChoiceBeatsEnvironmentInTheGemm) {
  PolicyEnvScope scope;
  PolicyEnvScope::set(kGemmEnv, "1");
  PolicyEnvScope::set(kModelEnv, "cpu");
  Probe p = make_probe(3, 4, Op::N, Op::N, DType::f16);
  run_probe_and_check(p, DType::f16, kEpilogues[0], Fp16Mode::alt);
  set_gemm_fp16_alt_impl(AltImplChoice::original);
  set_fp16_device_model(Fp16DeviceModel::mi200);
  {
    BackwardPassGuard backward;
    run_probe_and_check(p, DType::f16, kEpilogues[0], Fp16Mode::flush);
  }
  set_gemm_fp16_alt_impl(AltImplChoice::per_pass);
  run_probe_and_check(p, DType::f16, kEpilogues[1], Fp16Mode::flush);
  {
    BackwardPassGuard backward;
    run_probe_and_check(p, DType::f16, kEpilogues[1], Fp16Mode::alt);
  }
}

// Operands that are not fp16 leave the policy out: no environment read (an invalid variable
// does not matter), no counters, the GEMM runs as called.
TEST(Fp16PolicyGemm, NonFp16GemmIgnoresThePolicy) {
  PolicyEnvScope scope;
  PolicyEnvScope::set(kGemmEnv, "not-a-number");
  reset_fp16_counters();
  std::vector<std::uint16_t> a(6, bfloat16(1.5f).bits), b(6, bfloat16(2.0f).bits);
  std::vector<float> d(4, NAN);
  GemmArgs args;
  args.m = 2;
  args.n = 2;
  args.k = 3;
  args.a = a.data();
  args.a_dtype = DType::bf16;
  args.lda = 2;
  args.b = b.data();
  args.b_dtype = DType::bf16;
  args.ldb = 3;
  args.d = d.data();
  args.d_dtype = DType::f32;
  args.ldd = 2;
  GemmReport report;
  gemm_with_policy(args, &report);
  EXPECT_FALSE(report.fp16);
  for (float v : d) EXPECT_EQ(v, 9.0f);
  EXPECT_EQ(fp16_counters().gemm_calls(), 0);
  // The same call with an fp16 operand consults the (invalid) variable and fails before writing.
  std::vector<std::uint16_t> a16(6, half(1.5f).bits);
  args.a = a16.data();
  args.a_dtype = DType::f16;
  std::fill(d.begin(), d.end(), -1.0f);
  EXPECT_THROW(gemm_with_policy(args, &report), Error);
  for (float v : d) EXPECT_EQ(v, -1.0f);
  EXPECT_EQ(fp16_counters().gemm_calls(), 0);
}

// A GEMM issued under a BackwardPassGuard with 2 threads: gemm_with_policy resolves the mode on
// the caller, so every column, whichever thread computed it, follows alt (the workers' own
// state is "forward", which under the MI200 model would be flush).
TEST(Fp16PolicyGemm, WorkerThreadsFollowTheCaller) {
  PolicyEnvScope scope;
  set_fp16_device_model(Fp16DeviceModel::mi200);
  testing::ThreadsScope threads(2);
  for (Isa isa : testing::available_isas()) {
    SCOPED_TRACE(isa_name(isa));
    testing::IsaScope isa_scope(isa);
    Probe p = make_probe(37, 300, Op::N, Op::N, DType::f16);
    BackwardPassGuard backward;
    run_probe_and_check(p, DType::f16, kEpilogues[0], Fp16Mode::alt);
    BackwardPassGuard forward(false);
    run_probe_and_check(p, DType::f16, kEpilogues[0], Fp16Mode::flush);
  }
}

// ---------------------------------------------------------------------------------------------
// Gradient-sized GEMMs. Reference: double accumulation of the operands as the mode sees them.

// |x| is a non-zero fp16 subnormal.
bool is_f16_subnormal(double x) { return x != 0.0 && std::fabs(x) < 0x1p-14; }

// Error bound of an fp16 GEMM element against the exact double result of the fp16 operands,
// for `mode` exact or alt, with s = sum_p |a_p b_p| and r the reference value:
//   alt operand rounding: each operand within 2^-8 relative (bf16 RNE; fp16 subnormals are bf16
//     normals), so each product within (2 u_bf + u_bf^2) |a b|;
//   fp32 accumulation of k terms in any order: gamma_k = k u32 / (1 - k u32) times the sum of
//     the |products| (which are at most (1 + u_bf)^2 |a b|);
//   the final rounding to fp16: 2^-11 relative in the normal range, 2^-25 (half the subnormal
//     step) absolute below it; both are added (a bound for either case).
double error_bound(Fp16Mode mode, double s, double r, std::int64_t k) {
  const double u_bf = 0x1p-8, u32 = 0x1p-24;
  const double gamma = static_cast<double>(k) * u32 / (1.0 - static_cast<double>(k) * u32);
  const double operand = mode == Fp16Mode::alt ? (2 * u_bf + u_bf * u_bf) * s : 0.0;
  const double grow = mode == Fp16Mode::alt ? (1 + u_bf) * (1 + u_bf) : 1.0;
  return operand + gamma * grow * s + 0x1p-11 * std::fabs(r) + 0x1p-25;
}

struct GradientCase {
  Buffer a, b;  // A: m x k (column-major, lda = m), B: k x n (ldb = k), both f16
  std::int64_t m, n, k;
  std::vector<double> ref, abs_sum;  // exact double result of the fp16 operands; sum |a b|
};

GradientCase make_gradient_case(std::int64_t m, std::int64_t n, std::int64_t k, std::mt19937_64& rng, double a_lo,
                                double a_hi, bool b_normal) {
  GradientCase g{Buffer(DType::f16, m * k), Buffer(DType::f16, k * n), m, n, k, {}, {}};
  std::uniform_real_distribution<double> magnitude(a_lo, a_hi);
  std::bernoulli_distribution negative(0.5);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::int64_t i = 0; i < m * k; ++i) g.a.set(i, negative(rng) ? -magnitude(rng) : magnitude(rng));
  for (std::int64_t i = 0; i < k * n; ++i)
    g.b.set(i, b_normal ? normal(rng) : (negative(rng) ? -magnitude(rng) : magnitude(rng)));
  g.ref.assign(static_cast<std::size_t>(m * n), 0.0);
  g.abs_sum.assign(static_cast<std::size_t>(m * n), 0.0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t p = 0; p < k; ++p) {
        const double t = g.a.get(i + p * m) * g.b.get(p + j * k);
        g.ref[static_cast<std::size_t>(i + j * m)] += t;
        g.abs_sum[static_cast<std::size_t>(i + j * m)] += std::fabs(t);
      }
  return g;
}

// Runs the case through gemm_with_policy in the given pass; returns D as doubles.
std::vector<double> run_gradient_case(GradientCase& g, bool backward, GemmReport& report) {
  Buffer d(DType::f16, g.m * g.n);
  d.poison();
  GemmArgs args;
  args.m = g.m;
  args.n = g.n;
  args.k = g.k;
  args.a = g.a.data();
  args.a_dtype = DType::f16;
  args.lda = g.m;
  args.b = g.b.data();
  args.b_dtype = DType::f16;
  args.ldb = g.k;
  args.d = d.data();
  args.d_dtype = DType::f16;
  args.ldd = g.m;
  BackwardPassGuard pass(backward);
  gemm_with_policy(args, &report);
  std::vector<double> out(static_cast<std::size_t>(g.m * g.n));
  for (std::int64_t i = 0; i < g.m * g.n; ++i) out[static_cast<std::size_t>(i)] = d.get(i);
  return out;
}

// Products of values 1e-4..1e-3 summed over k = 32: every |result| <= 32 * (1.001e-3)^2 =
// 3.2e-5 < 2^-14 (6.1e-5), so every non-zero output is an fp16 subnormal. Under the MI200 model's
// forward (flush) all of them are written as 0; in the backward pass (alt) they are kept within
// the bound above.
TEST(Fp16PolicyGemm, SubnormalOutputsVanishUnderFlushAndSurviveUnderAlt) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  PolicyEnvScope scope;
  set_fp16_device_model(Fp16DeviceModel::mi200);
  for (Isa isa : testing::available_isas()) {
    SCOPED_TRACE(isa_name(isa));
    testing::IsaScope isa_scope(isa);
    GradientCase g = make_gradient_case(48, 40, 32, rng, 1e-4, 1e-3, false);
    for (double r : g.ref) ASSERT_LT(std::fabs(r), 0x1p-14);  // the premise, from the ranges
    GemmReport flush_report, alt_report;
    const std::vector<double> flushed = run_gradient_case(g, false, flush_report);
    const std::vector<double> kept = run_gradient_case(g, true, alt_report);
    ASSERT_EQ(flush_report.fp16_mode, Fp16Mode::flush);
    ASSERT_EQ(alt_report.fp16_mode, Fp16Mode::alt);
    // The same product in exact mode through gemm directly (no policy): with no subnormal inputs
    // its accumulator is flush mode's, so it shows which outputs flush mode had to zero.
    Buffer exact_d(DType::f16, g.m * g.n);
    exact_d.poison();
    GemmArgs args;
    args.m = g.m;
    args.n = g.n;
    args.k = g.k;
    args.a = g.a.data();
    args.a_dtype = DType::f16;
    args.lda = g.m;
    args.b = g.b.data();
    args.b_dtype = DType::f16;
    args.ldb = g.k;
    args.d = exact_d.data();
    args.d_dtype = DType::f16;
    args.ldd = g.m;
    args.fp16_mode = Fp16Mode::exact;
    GemmReport exact_report;
    gemm(args, &exact_report);
    const Fp16Counters before = fp16_counters();
    add_fp16_gemm_report(exact_report);
    EXPECT_EQ(fp16_counters().exact.gemm_calls, before.exact.gemm_calls + 1);
    std::int64_t exact_subnormal = 0;
    for (std::int64_t i = 0; i < exact_d.size(); ++i) exact_subnormal += is_f16_subnormal(exact_d.get(i));
    EXPECT_EQ(exact_report.fp16_subnormal_outputs, exact_subnormal);
    EXPECT_EQ(flush_report.fp16_subnormal_outputs, exact_subnormal);
    // Premise: a sum rounds to 0 only below 2^-25 = 3e-8, while typical |sums| are ~1e-6.
    EXPECT_GT(exact_subnormal, g.m * g.n / 2);
    double lost = 0.0, alt_error = 0.0, total = 0.0;
    std::int64_t alt_subnormal = 0;
    for (std::size_t i = 0; i < g.ref.size(); ++i) {
      ASSERT_EQ(flushed[i], 0.0) << i;  // flush: every subnormal output written as 0
      const double bound = error_bound(Fp16Mode::alt, g.abs_sum[i], g.ref[i], g.k);
      ASSERT_LE(std::fabs(kept[i] - g.ref[i]), bound) << i << " ref " << g.ref[i];
      if (is_f16_subnormal(kept[i])) ++alt_subnormal;
      lost += std::fabs(flushed[i] - g.ref[i]);
      alt_error += std::fabs(kept[i] - g.ref[i]);
      total += std::fabs(g.ref[i]);
    }
    EXPECT_EQ(lost, total);  // flush lost all of it
    std::printf("[   INFO   ] %s: flush lost 100%% of sum|ref|, alt's sum|error| is %.3g%% of it\n",
                std::string(isa_name(isa)).c_str(), 100 * alt_error / total);
    // The report counts the outputs that rounded to a subnormal (the flushed ones for flush).
    EXPECT_EQ(alt_report.fp16_subnormal_outputs, alt_subnormal);
    EXPECT_EQ(flush_report.fp16_subnormal_inputs, 0);
  }
}

// A weight gradient dW = dY^T X-like product whose gradient operand is entirely fp16-subnormal
// (|g| in [2^-21, 2^-14 - 2^-24], the largest subnormal) against N(0, 1) activations, k = 256: the results are normal
// fp16 numbers. flush reads every gradient as 0, so every output is exactly 0; alt keeps them.
TEST(Fp16PolicyGemm, SubnormalGradientInputsVanishUnderFlushAndSurviveUnderAlt) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  PolicyEnvScope scope;
  set_fp16_device_model(Fp16DeviceModel::mi200);
  reset_fp16_counters();
  std::int64_t calls = 0;
  for (Isa isa : testing::available_isas()) {
    SCOPED_TRACE(isa_name(isa));
    testing::IsaScope isa_scope(isa);
    GradientCase g = make_gradient_case(33, 24, 256, rng, 0x1p-21, 0x1p-14 - 0x1p-24, true);
    std::int64_t subnormal_a = 0;
    for (std::int64_t i = 0; i < g.a.size(); ++i) subnormal_a += is_f16_subnormal(g.a.get(i));
    ASSERT_EQ(subnormal_a, g.a.size());  // the premise: every gradient value is subnormal
    std::int64_t subnormal_b = 0;        // an N(0, 1) activation is rarely one (|x| < 6.1e-5)
    for (std::int64_t i = 0; i < g.b.size(); ++i) subnormal_b += is_f16_subnormal(g.b.get(i));
    GemmReport flush_report, alt_report;
    const std::vector<double> flushed = run_gradient_case(g, false, flush_report);
    const std::vector<double> kept = run_gradient_case(g, true, alt_report);
    calls += 2;
    EXPECT_EQ(flush_report.fp16_subnormal_inputs, subnormal_a + subnormal_b);
    EXPECT_EQ(alt_report.fp16_subnormal_inputs, subnormal_a + subnormal_b);
    double alt_error = 0.0, total = 0.0;
    for (std::size_t i = 0; i < g.ref.size(); ++i) {
      ASSERT_EQ(flushed[i], 0.0) << i;
      const double bound = error_bound(Fp16Mode::alt, g.abs_sum[i], g.ref[i], g.k);
      ASSERT_LE(std::fabs(kept[i] - g.ref[i]), bound) << i << " ref " << g.ref[i];
      alt_error += std::fabs(kept[i] - g.ref[i]);
      total += std::fabs(g.ref[i]);
    }
    EXPECT_GT(total, 0.0);
    std::printf("[   INFO   ] %s: flush lost 100%% of sum|ref|, alt's sum|error| is %.3g%% of it\n",
                std::string(isa_name(isa)).c_str(), 100 * alt_error / total);
  }
  const Fp16Counters c = fp16_counters();
  EXPECT_EQ(c.flush.gemm_calls, calls / 2);
  EXPECT_EQ(c.alt.gemm_calls, calls / 2);
  EXPECT_EQ(c.subnormal_inputs_flushed(), c.alt.subnormal_inputs);
  EXPECT_GT(c.subnormal_inputs_flushed(), 0);
  reset_fp16_counters();
}

}  // namespace
}  // namespace ampkit
