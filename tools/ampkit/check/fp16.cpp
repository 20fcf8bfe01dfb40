// `ampkit check fp16` (tools layer, check/): reproduces, on this CPU, the fp16 gradient underflow that
// the alternate implementation fixes, and reports what the fp16 policy does about it.
// A Linear layer in fp16: forward Y = X Wᵀ, backward dW = dYᵀ X and db = Σ dY (the BGRADB
// epilogue) with gradients dY small enough to be fp16 subnormals. Each GEMM runs through gemm_with_policy (forward
// outside, backward inside a BackwardPassGuard), then the backward GEMM once per forced mode for comparison; every
// result is compared with the exact product of the same fp16 inputs in double.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/float16.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/ops/gemm.hpp"
#include "tools/ampkit/cli/options.hpp"
#include "tools/ampkit/commands.hpp"
#include "tools/ampkit/common/json_line.hpp"
#include "tools/ampkit/common/memory.hpp"

namespace ampkit::tools {
namespace {

using tools::JsonLine;

// Column-major m x n fp16 matrix, entries N(0, stddev) rounded to fp16.
std::vector<std::uint16_t> random_half(std::int64_t count, double stddev, std::mt19937_64& rng) {
  std::normal_distribution<double> dist(0.0, stddev);
  std::vector<std::uint16_t> v(static_cast<std::size_t>(count));
  for (auto& h : v) h = float_to_half_bits(static_cast<float>(dist(rng)));
  return v;
}

std::int64_t count_subnormal(const std::vector<std::uint16_t>& v) {
  std::int64_t n = 0;
  for (std::uint16_t h : v) n += (h & 0x7c00) == 0 && (h & 0x03ff) != 0;
  return n;
}

// D = op(A) op(B) in double from the fp16 values as stored (the exact product).
std::vector<double> exact_product(const GemmArgs& g) {
  std::vector<double> d(static_cast<std::size_t>(g.m * g.n));
  const auto* a = static_cast<const std::uint16_t*>(g.a);
  const auto* b = static_cast<const std::uint16_t*>(g.b);
  for (std::int64_t j = 0; j < g.n; ++j)
    for (std::int64_t i = 0; i < g.m; ++i) {
      double sum = 0.0;
      for (std::int64_t p = 0; p < g.k; ++p) {
        const std::int64_t ia = g.op_a == Op::N ? i + p * g.lda : p + i * g.lda;
        const std::int64_t ib = g.op_b == Op::N ? p + j * g.ldb : j + p * g.ldb;
        sum += static_cast<double>(half_bits_to_float(a[ia])) * half_bits_to_float(b[ib]);
      }
      d[static_cast<std::size_t>(i + j * g.m)] = sum;
    }
  return d;
}

struct Outcome {
  std::string label;
  Fp16Mode mode = Fp16Mode::exact;
  std::int64_t subnormal_inputs = 0, subnormal_outputs = 0;
  double relative_error = 0.0;              // ||D - exact||_2 / ||exact||_2
  double lost = 0.0;                        // fraction of outputs that are 0 where the exact value is not
  double db_relative_error = std::nan("");  // backward only: ||db - exact||_2 / ||exact||_2
};

// db = Σ over the batch of dY as given, in double: the bias gradient's exact value.
std::vector<double> exact_bias_grad(const GemmArgs& backward) {
  std::vector<double> db(static_cast<std::size_t>(backward.n), 0.0);
  const auto* dy = static_cast<const std::uint16_t*>(backward.b);  // B = dY, row-major [batch, out]
  for (std::int64_t j = 0; j < backward.n; ++j)
    for (std::int64_t p = 0; p < backward.k; ++p)
      db[static_cast<std::size_t>(j)] += half_bits_to_float(dy[j + p * backward.ldb]);
  return db;
}

double relative_error(const std::vector<float>& got, const std::vector<double>& exact) {
  double err2 = 0.0, ref2 = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    err2 += (got[i] - exact[i]) * (got[i] - exact[i]);
    ref2 += exact[i] * exact[i];
  }
  return ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
}

Outcome compare(const std::string& label, const GemmReport& report, const std::vector<std::uint16_t>& d,
                const std::vector<double>& exact) {
  Outcome o{label, report.fp16_mode, report.fp16_subnormal_inputs, report.fp16_subnormal_outputs};
  double err2 = 0.0, ref2 = 0.0;
  std::int64_t lost = 0, nonzero = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double v = half_bits_to_float(d[i]);
    err2 += (v - exact[i]) * (v - exact[i]);
    ref2 += exact[i] * exact[i];
    if (exact[i] != 0.0) {
      ++nonzero;
      lost += v == 0.0;
    }
  }
  o.relative_error = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  o.lost = nonzero > 0 ? static_cast<double>(lost) / static_cast<double>(nonzero) : 0.0;
  return o;
}

// The command line of the check.
struct Fp16CheckPlan {
  std::int64_t batch = 256, in = 64, out = 64;
  double grad_scale = 2e-5;
  std::uint64_t seed = 1;
  bool json = false;
};

/// The most multiply-adds one exact product (batch x in x out, in double on one thread) may take:
/// 2^31, about 9 s each at the 2.5e8 per second measured on the Zen 4 machine.
constexpr std::int64_t kMaxExactMacs = std::int64_t{1} << 31;
constexpr double kExactMacsPerSecond = 2.5e8;

// Converts an ampkit::Error of a library parser of a command-line value into a UsageError.
template <typename Fn>
auto parse_value(Fn&& fn) {
  try {
    return fn();
  } catch (const Error& e) {
    throw cli::UsageError(e.what());
  }
}

// Parses the command line (and applies --fp16-model / --fp16-alt-impl); nullopt after --help.
// The size is limited up front: the exact products' work, and the buffers against the memory
// available now.
std::optional<Fp16CheckPlan> parse_plan(const Args& args) {
  std::optional<std::string> model, alt_impl;
  std::optional<std::int64_t> batch, in, out, seed;
  std::optional<double> grad_scale;
  bool json = false;
  cli::OptionParser parser("check fp16",
                           "An fp16 Linear layer (X: B x I, W: O x I); forward Y = X W^T, backward dW = dY^T X with\n"
                           "dY ~ N(0, S) (default S = 2e-5: most gradients are fp16 subnormals, below 6.1e-5).\n"
                           "Both GEMMs go through the fp16 policy (backward inside a BackwardPassGuard); the backward\n"
                           "GEMM is then run once per forced mode. Errors are against the exact product in double.");
  parser.text("--fp16-model", "cpu|mi200", &model, "overrides AMPKIT_FP16_MODEL")
      .text("--fp16-alt-impl", "per-pass|original|alternate", &alt_impl, "overrides ROCBLAS_INTERNAL_FP16_ALT_IMPL")
      .integer("--batch", "B", 1, 1 << 16, &batch, "rows of X (default 256)")
      .integer("--in", "I", 1, 1 << 14, &in, "input features (default 64)")
      .integer("--out", "O", 1, 1 << 14, &out, "output features (default 64)")
      .positive_number("--grad-scale", "S", &grad_scale, "standard deviation of dY (default 2e-5)")
      .integer("--seed", "N", 0, INT64_MAX, &seed, "random seed (default 1)")
      .flag("--json", &json, "one JSON object per GEMM instead of a table");
  parser.footer("B x I x O is at most 2^31 (about 20 s): the exact products run in double on one thread.");
  if (!parser.parse(args)) return std::nullopt;

  Fp16CheckPlan p;
  p.batch = batch.value_or(p.batch);
  p.in = in.value_or(p.in);
  p.out = out.value_or(p.out);
  p.grad_scale = grad_scale.value_or(p.grad_scale);
  p.seed = static_cast<std::uint64_t>(seed.value_or(1));
  p.json = json;
  const std::int64_t macs = p.batch * p.in * p.out;  // <= 2^44: no overflow
  if (macs > kMaxExactMacs)
    cli::usage_fail("--batch ", p.batch, " x --in ", p.in, " x --out ", p.out, " = ", static_cast<double>(macs),
                    " multiply-adds per exact product; at most 2^31 (", kMaxExactMacs,
                    ") are allowed (two products in double on one thread: estimated ",
                    static_cast<double>(2 * macs) / kExactMacsPerSecond / 3600.0, " h)");
  // x, w, dy, y, dw in fp16; the two exact products in double.
  const double need = 2.0 * static_cast<double>(p.batch * p.in + p.out * p.in + 2 * p.batch * p.out + p.in * p.out) +
                      8.0 * static_cast<double>(p.out * p.batch + p.in * p.out);
  tools::require_memory("check fp16", "--batch x --in x --out", need);
  // The spellings are the library's parsers' (their messages name the accepted values).
  if (model) set_fp16_device_model(parse_value([&] { return parse_fp16_device_model(*model, "--fp16-model"); }));
  if (alt_impl)
    set_gemm_fp16_alt_impl(parse_value([&] { return parse_alt_impl_choice(*alt_impl, "--fp16-alt-impl"); }));
  return p;
}

// The two GEMMs of the layer on the given fp16 buffers; the backward one also writes db.
struct LayerGemms {
  GemmArgs forward, backward;
};

LayerGemms make_gemms(const Fp16CheckPlan& p, const std::vector<std::uint16_t>& x, const std::vector<std::uint16_t>& w,
                      const std::vector<std::uint16_t>& dy, std::vector<std::uint16_t>& y,
                      std::vector<std::uint16_t>& dw, std::vector<float>& db) {
  LayerGemms g;
  // Forward Y = X Wᵀ: GEMM m, n, k = out, batch, in; A = W (T), B = X (N).
  GemmArgs& fwd = g.forward;
  fwd.op_a = Op::T;
  fwd.m = p.out, fwd.n = p.batch, fwd.k = p.in;
  fwd.a = w.data(), fwd.a_dtype = DType::f16, fwd.lda = p.in;
  fwd.b = x.data(), fwd.b_dtype = DType::f16, fwd.ldb = p.in;
  fwd.d = y.data(), fwd.d_dtype = DType::f16, fwd.ldd = p.out;
  // Backward dW = dYᵀ X: GEMM m, n, k = in, out, batch; A = X (N), B = dY (T).
  GemmArgs& bwd = g.backward;
  bwd.op_b = Op::T;
  bwd.m = p.in, bwd.n = p.out, bwd.k = p.batch;
  bwd.a = x.data(), bwd.a_dtype = DType::f16, bwd.lda = p.in;
  bwd.b = dy.data(), bwd.b_dtype = DType::f16, bwd.ldb = p.out;
  bwd.d = dw.data(), bwd.d_dtype = DType::f16, bwd.ldd = p.in;
  bwd.epilogue.kind = Epilogue::BGRADB;  // db = Σ over the batch of dY (length out)
  bwd.epilogue.bias_grad = db.data(), bwd.epilogue.bias_dtype = DType::f32;
  return g;
}

void print_json(const Fp16CheckPlan& p, const std::vector<Outcome>& outcomes) {
  for (const Outcome& o : outcomes) {
    JsonLine line;
    line.add("check", "fp16").add("case", o.label).add("mode", fp16_mode_name(o.mode));
    line.add("device_model", fp16_device_model_name(fp16_device_model()));
    line.add("alt_impl", alt_impl_choice_name(gemm_fp16_alt_impl()));
    line.add("batch", p.batch).add("in", p.in).add("out", p.out).add("grad_scale", p.grad_scale);
    line.add("subnormal_inputs", o.subnormal_inputs).add("subnormal_outputs", o.subnormal_outputs);
    line.add("relative_error", o.relative_error).add("lost_fraction", o.lost);
    if (!std::isnan(o.db_relative_error)) line.add("db_relative_error", o.db_relative_error);
    std::printf("%s\n", line.str().c_str());
  }
}

void print_table(const Fp16CheckPlan& p, const std::vector<Outcome>& outcomes, std::int64_t dy_subnormal,
                 std::int64_t dy_count) {
  std::printf("fp16 check: device model %s (original mode %s), GEMM alt-impl choice %s\n",
              fp16_device_model_name(fp16_device_model()).data(), fp16_mode_name(original_fp16_mode()).data(),
              alt_impl_choice_name(gemm_fp16_alt_impl()).data());
  std::printf(
      "Linear fp16: batch %lld, in %lld, out %lld; dY ~ N(0, %g): %lld of %lld gradients "
      "are fp16 subnormals\n\n",
      static_cast<long long>(p.batch), static_cast<long long>(p.in), static_cast<long long>(p.out), p.grad_scale,
      static_cast<long long>(dy_subnormal), static_cast<long long>(dy_count));
  std::printf("%-22s %-6s %14s %15s %14s %10s %14s\n", "GEMM", "mode", "subnormal in", "subnormal out", "rel. error",
              "lost", "db rel. error");
  for (const Outcome& o : outcomes) {
    std::printf("%-22s %-6s %14lld %15lld %14.3e %9.1f%%", o.label.c_str(), fp16_mode_name(o.mode).data(),
                static_cast<long long>(o.subnormal_inputs), static_cast<long long>(o.subnormal_outputs),
                o.relative_error, 100.0 * o.lost);
    if (std::isnan(o.db_relative_error))
      std::printf(" %14s\n", "-");
    else
      std::printf(" %14.3e\n", o.db_relative_error);
  }
  std::printf(
      "\nrel. error = ||D - exact||2 / ||exact||2 against the exact product of the same fp16 "
      "inputs;\nlost = outputs that are 0 where the exact value is not. In flush mode "
      "(the MI200 model) the\nsubnormal counts were flushed to zero; in exact and alt mode "
      "they are what flush would lose.\ndb = the bias gradient (BGRADB of the dW GEMM) against "
      "the exact sum of dY as given: a\nvector-unit reduction, so no mode flushes or rounds "
      "its operand (docs/NUMERICS.md).\n");
}

}  // namespace

int run_check_fp16(const Args& args) {
  const std::optional<Fp16CheckPlan> plan = parse_plan(args);
  if (!plan) return 0;
  const Fp16CheckPlan& p = *plan;
  std::mt19937_64 rng(p.seed);
  // Row-major X (batch x in) = column-major (in x batch); W (out x in) = column-major (in x out).
  const std::vector<std::uint16_t> x = random_half(p.batch * p.in, 1.0, rng);
  const std::vector<std::uint16_t> w = random_half(p.out * p.in, 1.0 / std::sqrt(double(p.in)), rng);
  const std::vector<std::uint16_t> dy = random_half(p.batch * p.out, p.grad_scale, rng);
  std::vector<std::uint16_t> y(static_cast<std::size_t>(p.out * p.batch));
  std::vector<std::uint16_t> dw(static_cast<std::size_t>(p.in * p.out));
  std::vector<float> db(static_cast<std::size_t>(p.out));
  const LayerGemms g = make_gemms(p, x, w, dy, y, dw, db);
  const std::vector<double> y_exact = exact_product(g.forward), dw_exact = exact_product(g.backward);
  const std::vector<double> db_exact = exact_bias_grad(g.backward);

  std::vector<Outcome> outcomes;
  GemmReport report;
  gemm_with_policy(g.forward, &report);
  outcomes.push_back(compare("forward Y (policy)", report, y, y_exact));
  {
    BackwardPassGuard backward;
    gemm_with_policy(g.backward, &report);
  }
  outcomes.push_back(compare("backward dW (policy)", report, dw, dw_exact));
  outcomes.back().db_relative_error = relative_error(db, db_exact);
  for (Fp16Mode mode : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt}) {
    GemmArgs forced = g.backward;
    forced.fp16_mode = mode;
    gemm(forced, &report);
    outcomes.push_back(compare("backward dW (forced)", report, dw, dw_exact));
    outcomes.back().db_relative_error = relative_error(db, db_exact);
  }
  if (p.json)
    print_json(p, outcomes);
  else
    print_table(p, outcomes, count_subnormal(dy), static_cast<std::int64_t>(dy.size()));
  return 0;
}

}  // namespace ampkit::tools
