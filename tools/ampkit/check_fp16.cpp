// `ampkit check fp16` (tools layer): reproduces, on this CPU, the fp16 gradient underflow that
// the alternate implementation fixes, and reports what the fp16 policy does about it.
// A Linear layer in fp16: forward Y = X Wᵀ, backward dW = dYᵀ X with gradients dY small enough
// to be fp16 subnormals. Each GEMM runs through gemm_with_policy (forward outside, backward inside
// a BackwardPassGuard), then the backward GEMM once per forced mode for comparison; every result
// is compared with the exact product of the same fp16 inputs in double.
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
#include "tools/ampkit/bench_util.hpp"
#include "tools/ampkit/commands.hpp"

namespace ampkit::tools {
namespace {

using bench::JsonLine;
using bench::Options;
using bench::parse_int;

constexpr const char* kCommand = "check fp16";

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
  double relative_error = 0.0;  // ||D - exact||_2 / ||exact||_2
  double lost = 0.0;            // fraction of outputs that are 0 where the exact value is not
};

Outcome compare(const std::string& label, const GemmReport& report,
                const std::vector<std::uint16_t>& d, const std::vector<double>& exact) {
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

void print_usage() {
  std::printf(
      "usage: ampkit check fp16 [--fp16-model cpu|mi200] [--fp16-alt-impl per-pass|original|alternate]\n"
      "                         [--batch B] [--in I] [--out O] [--grad-scale S] [--seed N] [--json]\n"
      "An fp16 Linear layer (X: B x I, W: O x I); forward Y = X W^T, backward dW = dY^T X with\n"
      "dY ~ N(0, S) (default S = 2e-5: most gradients are fp16 subnormals, below 6.1e-5).\n"
      "Both GEMMs go through the fp16 policy (backward inside a BackwardPassGuard); the backward\n"
      "GEMM is then run once per forced mode. Errors are against the exact product in double.\n"
      "--fp16-model / --fp16-alt-impl override AMPKIT_FP16_MODEL / ROCBLAS_INTERNAL_FP16_ALT_IMPL.\n");
}

}  // namespace

int run_check_fp16(const Args& args) {
  const Options options(args, kCommand,
                        {{"--fp16-model", true}, {"--fp16-alt-impl", true}, {"--batch", true},
                         {"--in", true}, {"--out", true}, {"--grad-scale", true}, {"--seed", true}});
  if (options.common().help) {
    print_usage();
    return 0;
  }
  if (options.has("--fp16-model"))
    set_fp16_device_model(parse_fp16_device_model(options.value_or("--fp16-model", ""), "--fp16-model"));
  if (options.has("--fp16-alt-impl"))
    set_gemm_fp16_alt_impl(parse_alt_impl_choice(options.value_or("--fp16-alt-impl", ""), "--fp16-alt-impl"));
  const std::int64_t batch = parse_int(options.value_or("--batch", "256"), kCommand, "--batch", 1, 1 << 16);
  const std::int64_t in = parse_int(options.value_or("--in", "64"), kCommand, "--in", 1, 1 << 14);
  const std::int64_t out = parse_int(options.value_or("--out", "64"), kCommand, "--out", 1, 1 << 14);
  const std::string scale_text = options.value_or("--grad-scale", "2e-5");
  char* end = nullptr;
  const double grad_scale = std::strtod(scale_text.c_str(), &end);
  if (end == scale_text.c_str() || *end != '\0' || !(grad_scale > 0.0) || !std::isfinite(grad_scale))
    fail(kCommand, "--grad-scale expects a positive finite number, but got '", scale_text, "'");
  const auto seed = static_cast<std::uint64_t>(
      parse_int(options.value_or("--seed", "1"), kCommand, "--seed", 0, INT64_MAX));

  std::mt19937_64 rng(seed);
  // Row-major X (batch x in) = column-major (in x batch); W (out x in) = column-major (in x out).
  const std::vector<std::uint16_t> x = random_half(batch * in, 1.0, rng);
  const std::vector<std::uint16_t> w = random_half(out * in, 1.0 / std::sqrt(double(in)), rng);
  const std::vector<std::uint16_t> dy = random_half(batch * out, grad_scale, rng);

  // Forward Y = X Wᵀ: GEMM m, n, k = out, batch, in; A = W (T), B = X (N).
  GemmArgs fwd;
  fwd.op_a = Op::T;
  fwd.m = out, fwd.n = batch, fwd.k = in;
  fwd.a = w.data(), fwd.a_dtype = DType::f16, fwd.lda = in;
  fwd.b = x.data(), fwd.b_dtype = DType::f16, fwd.ldb = in;
  fwd.d_dtype = DType::f16, fwd.ldd = out;
  // Backward dW = dYᵀ X: GEMM m, n, k = in, out, batch; A = X (N), B = dY (T).
  GemmArgs bwd;
  bwd.op_b = Op::T;
  bwd.m = in, bwd.n = out, bwd.k = batch;
  bwd.a = x.data(), bwd.a_dtype = DType::f16, bwd.lda = in;
  bwd.b = dy.data(), bwd.b_dtype = DType::f16, bwd.ldb = out;
  bwd.d_dtype = DType::f16, bwd.ldd = in;

  std::vector<std::uint16_t> y(static_cast<std::size_t>(out * batch));
  std::vector<std::uint16_t> dw(static_cast<std::size_t>(in * out));
  fwd.d = y.data();
  bwd.d = dw.data();
  const std::vector<double> y_exact = exact_product(fwd), dw_exact = exact_product(bwd);

  std::vector<Outcome> outcomes;
  GemmReport report;
  gemm_with_policy(fwd, &report);
  outcomes.push_back(compare("forward Y (policy)", report, y, y_exact));
  {
    BackwardPassGuard backward;
    gemm_with_policy(bwd, &report);
  }
  outcomes.push_back(compare("backward dW (policy)", report, dw, dw_exact));
  for (Fp16Mode mode : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt}) {
    GemmArgs forced = bwd;
    forced.fp16_mode = mode;
    gemm(forced, &report);
    outcomes.push_back(compare("backward dW (forced)", report, dw, dw_exact));
  }

  const std::int64_t dy_subnormal = count_subnormal(dy);
  if (options.common().json) {
    for (const Outcome& o : outcomes) {
      JsonLine line;
      line.add("check", "fp16").add("case", o.label).add("mode", fp16_mode_name(o.mode));
      line.add("device_model", fp16_device_model_name(fp16_device_model()));
      line.add("alt_impl", alt_impl_choice_name(gemm_fp16_alt_impl()));
      line.add("batch", batch).add("in", in).add("out", out).add("grad_scale", grad_scale);
      line.add("subnormal_inputs", o.subnormal_inputs).add("subnormal_outputs", o.subnormal_outputs);
      line.add("relative_error", o.relative_error).add("lost_fraction", o.lost);
      std::printf("%s\n", line.str().c_str());
    }
    return 0;
  }
  std::printf("fp16 check: device model %s (original mode %s), GEMM alt-impl choice %s\n",
              fp16_device_model_name(fp16_device_model()).data(),
              fp16_mode_name(original_fp16_mode()).data(),
              alt_impl_choice_name(gemm_fp16_alt_impl()).data());
  std::printf("Linear fp16: batch %lld, in %lld, out %lld; dY ~ N(0, %g): %lld of %lld gradients "
              "are fp16 subnormals\n\n",
              static_cast<long long>(batch), static_cast<long long>(in), static_cast<long long>(out),
              grad_scale, static_cast<long long>(dy_subnormal), static_cast<long long>(dy.size()));
  std::printf("%-22s %-6s %14s %15s %14s %10s\n", "GEMM", "mode", "subnormal in", "subnormal out",
              "rel. error", "lost");
  for (const Outcome& o : outcomes)
    std::printf("%-22s %-6s %14lld %15lld %14.3e %9.1f%%\n", o.label.c_str(),
                fp16_mode_name(o.mode).data(), static_cast<long long>(o.subnormal_inputs),
                static_cast<long long>(o.subnormal_outputs), o.relative_error, 100.0 * o.lost);
  std::printf("\nrel. error = ||D - exact||2 / ||exact||2 against the exact product of the same fp16 "
              "inputs;\nlost = outputs that are 0 where the exact value is not. In flush mode "
              "(the MI200 model) the\nsubnormal counts were flushed to zero; in exact and alt mode "
              "they are what flush would lose.\n");
  return 0;
}

}  // namespace ampkit::tools
