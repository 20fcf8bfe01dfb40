// Test harness of the GEMM suite: builds a random problem (operands drawn fresh, outputs
// poisoned), runs gemm() and the reference on copies, and checks every output against the
// reference with a tolerance derived from the dtypes, k and sum|a*b| (see docs/NUMERICS.md,
// "GEMM and epilogues"). Used by the gemm_*_test.cpp files.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/gemm.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/math/gelu_math.hpp"
#include "support/test_support.hpp"

namespace ampkit::gemm_test {

using testing::Buffer;

/// One GEMM configuration.
struct GemmCase {
  Op op_a = Op::N, op_b = Op::N;
  std::int64_t m = 1, n = 1, k = 1;
  DType a = DType::f32, b = DType::f32, c = DType::f32, d = DType::f32;
  float alpha = 1.0f, beta = 0.0f;
  Epilogue kind = Epilogue::DEFAULT;
  GeluVariant gelu = GeluVariant::tanh;
  DType bias_dtype = DType::f32, aux_dtype = DType::f32;
  bool accumulate_bias_grad = false;
  Fp16Mode mode = Fp16Mode::exact;
  std::int64_t pad = 0;  // added to every leading dimension
  bool c_is_d = false;   // in place: C and D are the same buffer

  std::string describe() const {
    std::ostringstream s;
    s << "op " << (op_a == Op::N ? 'N' : 'T') << (op_b == Op::N ? 'N' : 'T') << " m=" << m << " n=" << n << " k=" << k
      << " A=" << dtype_name(a) << " B=" << dtype_name(b) << " C=" << dtype_name(c) << " D=" << dtype_name(d)
      << " alpha=" << alpha << " beta=" << beta << " epilogue=" << static_cast<int>(kind)
      << " gelu=" << static_cast<int>(gelu) << " bias=" << dtype_name(bias_dtype) << " aux=" << dtype_name(aux_dtype)
      << " acc=" << accumulate_bias_grad << " mode=" << static_cast<int>(mode) << " pad=" << pad
      << " c_is_d=" << c_is_d;
    return s.str();
  }
};

/// The buffers of one call and the GemmArgs pointing at them.
struct GemmBuffers {
  GemmCase cfg;
  ops::GemmProblem problem;  // decoded flags (pointers of args are not used from here)
  Buffer a, b, c, d, aux, bias, bias_grad;
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0, aux_ld = 0;

  /// C(i, j) as the call reads it (from D's buffer when in place; read before the call).
  double c_value(std::int64_t i, std::int64_t j) const { return cfg.c_is_d ? d.get(i + j * ldd) : c.get(i + j * ldc); }

  GemmArgs args() {
    GemmArgs g;
    g.op_a = cfg.op_a, g.op_b = cfg.op_b, g.m = cfg.m, g.n = cfg.n, g.k = cfg.k;
    g.alpha = cfg.alpha, g.beta = cfg.beta;
    g.a = a.size() ? a.data() : nullptr, g.a_dtype = cfg.a, g.lda = lda;
    g.b = b.size() ? b.data() : nullptr, g.b_dtype = cfg.b, g.ldb = ldb;
    g.d = d.size() ? d.data() : nullptr, g.d_dtype = cfg.d, g.ldd = ldd;
    if (cfg.beta != 0.0f) {
      g.c = cfg.c_is_d ? g.d : (c.size() ? c.data() : nullptr);
      g.c_dtype = cfg.c_is_d ? cfg.d : cfg.c;
      g.ldc = cfg.c_is_d ? ldd : ldc;
    }
    GemmEpilogue& e = g.epilogue;
    e.kind = cfg.kind, e.gelu = cfg.gelu, e.bias_dtype = cfg.bias_dtype, e.aux_dtype = cfg.aux_dtype;
    e.accumulate_bias_grad = cfg.accumulate_bias_grad, e.aux_ld = aux_ld;
    if (problem.has_bias) e.bias = bias.size() ? bias.data() : nullptr;
    if (problem.aux_in || problem.aux_out) e.aux = aux.size() ? aux.data() : nullptr;
    if (problem.bias_grad != ops::GemmBiasGrad::none) e.bias_grad = bias_grad.size() ? bias_grad.data() : nullptr;
    g.fp16_mode = cfg.mode;
    return g;
  }
};

inline std::int64_t stored_elements(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  return rows == 0 || cols == 0 ? 0 : (cols - 1) * ld + rows;
}

/// Random operands N(0,1) (plus C, bias, aux input), poisoned outputs; bias_grad random when
/// accumulating, else poisoned. Padding elements are poisoned too (they must not be read).
inline GemmBuffers make_buffers(const GemmCase& cfg, std::mt19937_64& rng) {
  GemmBuffers t;
  t.cfg = cfg;
  GemmArgs probe;
  probe.epilogue.kind = cfg.kind;
  probe.a_dtype = cfg.a, probe.b_dtype = cfg.b, probe.fp16_mode = cfg.mode, probe.beta = cfg.beta;
  t.problem = ops::make_gemm_problem(probe);
  const std::int64_t a_rows = cfg.op_a == Op::N ? cfg.m : cfg.k, a_cols = cfg.op_a == Op::N ? cfg.k : cfg.m;
  const std::int64_t b_rows = cfg.op_b == Op::N ? cfg.k : cfg.n, b_cols = cfg.op_b == Op::N ? cfg.n : cfg.k;
  t.lda = std::max<std::int64_t>(1, a_rows) + cfg.pad;
  t.ldb = std::max<std::int64_t>(1, b_rows) + cfg.pad;
  t.ldc = std::max<std::int64_t>(1, cfg.m) + cfg.pad;
  t.ldd = std::max<std::int64_t>(1, cfg.m) + cfg.pad;
  t.aux_ld = std::max<std::int64_t>(1, cfg.m) + cfg.pad;
  const auto fill = [&](Buffer& buf, DType dt, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    buf = Buffer(dt, stored_elements(rows, cols, ld));
    buf.poison();
    std::normal_distribution<double> dist(0.0, 1.0);
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t i = 0; i < rows; ++i) buf.set(i + j * ld, dist(rng));
  };
  fill(t.a, cfg.a, a_rows, a_cols, t.lda);
  fill(t.b, cfg.b, b_rows, b_cols, t.ldb);
  if (cfg.beta != 0.0f && !cfg.c_is_d) fill(t.c, cfg.c, cfg.m, cfg.n, t.ldc);
  if (cfg.c_is_d && cfg.beta != 0.0f) {
    fill(t.d, cfg.d, cfg.m, cfg.n, t.ldd);
  } else {
    t.d = Buffer(cfg.d, stored_elements(cfg.m, cfg.n, t.ldd));
    t.d.poison();
  }
  if (t.problem.has_bias) fill(t.bias, cfg.bias_dtype, cfg.m, 1, 1);
  if (t.problem.aux_in) fill(t.aux, cfg.aux_dtype, cfg.m, cfg.n, t.aux_ld);
  if (t.problem.aux_out) {
    t.aux = Buffer(cfg.aux_dtype, stored_elements(cfg.m, cfg.n, t.aux_ld));
    t.aux.poison();
  }
  if (t.problem.bias_grad != ops::GemmBiasGrad::none) {
    const std::int64_t len = t.problem.bias_grad == ops::GemmBiasGrad::cols_of_b ? cfg.n : cfg.m;
    if (cfg.accumulate_bias_grad) {
      fill(t.bias_grad, cfg.bias_dtype, len, 1, 1);
    } else {
      t.bias_grad = Buffer(cfg.bias_dtype, len);
      t.bias_grad.poison();
    }
  }
  return t;
}

/// The same problem with op(A) and op(B) rounded to bf16 and given as bf16: what an f16 call in
/// alt mode must equal bit for bit.
inline GemmBuffers with_operands_as_bf16(const GemmBuffers& in) {
  GemmBuffers rounded = in;
  rounded.cfg.a = rounded.cfg.b = DType::bf16;
  rounded.a = Buffer(DType::bf16, in.a.size());
  rounded.b = Buffer(DType::bf16, in.b.size());
  for (std::int64_t i = 0; i < in.a.size(); ++i) rounded.a.set(i, in.a.get(i));
  for (std::int64_t i = 0; i < in.b.size(); ++i) rounded.b.set(i, in.b.get(i));
  return rounded;
}

/// Runs the reference engine directly on t (bypassing dispatch).
inline GemmReport run_reference(GemmBuffers& t) {
  const ops::GemmProblem p = ops::make_gemm_problem(t.args());
  ops::GemmCounters counters;
  cpu::gemm_reference(p, counters);
  GemmReport r;
  r.kernel = "gemm_reference";
  r.fp16_subnormal_inputs = counters.fp16_subnormal_inputs;
  r.fp16_subnormal_outputs = counters.fp16_subnormal_outputs;
  return r;
}

/// An operand element as the fp16 mode sees it (independent of the library's helpers).
inline double mode_value(double v, DType t, Fp16Mode mode) {
  if (t != DType::f16) return v;
  if (mode == Fp16Mode::flush && v != 0.0 && std::fabs(v) < 0x1p-14) return 0.0;
  if (mode == Fp16Mode::alt) return static_cast<double>(bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(v))));
  return v;
}

/// Compares gemm's outputs (got) with the reference's (want), both made from the same inputs.
/// got and want must come from copies of one make_buffers result.
inline void expect_close(const GemmBuffers& inputs, const GemmBuffers& got, const GemmBuffers& want) {
  const GemmCase& c = inputs.cfg;
  const ops::GemmProblem& p = inputs.problem;
  const bool fp16 = c.a == DType::f16 || c.b == DType::f16;
  const Fp16Mode mode = fp16 ? c.mode : Fp16Mode::exact;
  // op(A) row i and op(B) column j as the mode sees them.
  std::vector<double> oa(static_cast<std::size_t>(c.m * c.k)), ob(static_cast<std::size_t>(c.n * c.k));
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t kk = 0; kk < c.k; ++kk)
      oa[i * c.k + kk] =
          mode_value(inputs.a.get(c.op_a == Op::N ? i + kk * inputs.lda : kk + i * inputs.lda), c.a, mode);
  for (std::int64_t j = 0; j < c.n; ++j)
    for (std::int64_t kk = 0; kk < c.k; ++kk)
      ob[j * c.k + kk] =
          mode_value(inputs.b.get(c.op_b == Op::N ? kk + j * inputs.ldb : j + kk * inputs.ldb), c.b, mode);
  // The bounds: ampkit/numerics/error_bounds.hpp (gemm_*).
  namespace eb = error_bounds;
  const eb::GemmActivationBound act = p.activation == ops::GemmActivation::gelu    ? eb::GemmActivationBound::gelu
                                      : p.activation == ops::GemmActivation::dgelu ? eb::GemmActivationBound::dgelu
                                                                                   : eb::GemmActivationBound::none;
  std::vector<double> grad_tol(static_cast<std::size_t>(std::max(c.m, c.n)), 0.0);
  std::vector<double> grad_mag(grad_tol.size(), 0.0);
  std::int64_t reported = 0;
  for (std::int64_t j = 0; j < c.n; ++j) {
    for (std::int64_t i = 0; i < c.m; ++i) {
      double s = 0.0;
      for (std::int64_t kk = 0; kk < c.k; ++kk) s += std::fabs(oa[i * c.k + kk] * ob[j * c.k + kk]);
      double x = std::fabs(c.alpha) * s;
      if (c.beta != 0.0f) x += std::fabs(c.beta) * std::fabs(inputs.c_value(i, j));
      if (p.has_bias) x += std::fabs(inputs.bias.get(i));
      const double pre_tol = eb::gemm_accumulation(c.k, x);
      const std::int64_t di = i + j * inputs.ldd;
      const double w = want.d.get(di), g = got.d.get(di);
      const double aux_abs = p.aux_in ? std::fabs(inputs.aux.get(i + j * inputs.aux_ld)) : 0.0;
      const double tol_pre_act = eb::gemm_activation(act, pre_tol, x, aux_abs);
      const double tol = eb::gemm_output(tol_pre_act, w, c.d, p.flush);
      const bool ok = (std::isnan(w) && std::isnan(g)) || std::fabs(g - w) <= tol;
      if (!ok && reported++ < 5)
        ADD_FAILURE() << "D(" << i << ", " << j << ") = " << g << ", reference " << w << ", tolerance " << tol
                      << " (sum|ab| " << s << ")\n  " << c.describe();
      if (p.aux_out) {
        const std::int64_t ai = i + j * inputs.aux_ld;
        const double wa = want.aux.get(ai), ga = got.aux.get(ai);
        const double atol = eb::gemm_output(pre_tol, wa, c.aux_dtype, p.flush);
        if (!(std::fabs(ga - wa) <= atol) && reported++ < 5)
          ADD_FAILURE() << "aux(" << i << ", " << j << ") = " << ga << ", reference " << wa << ", tolerance " << atol
                        << "\n  " << c.describe();
      }
      if (p.bias_grad == ops::GemmBiasGrad::rows_of_d) {
        grad_tol[i] += tol_pre_act;
        grad_mag[i] += std::fabs(w) + tol_pre_act;
      }
    }
  }
  if (p.bias_grad == ops::GemmBiasGrad::none) return;
  const std::int64_t len = p.bias_grad == ops::GemmBiasGrad::cols_of_b ? c.n : c.m;
  for (std::int64_t r = 0; r < len; ++r) {
    double tol = 0.0;
    if (p.bias_grad == ops::GemmBiasGrad::rows_of_d) {
      tol = eb::gemm_bias_grad_of_d(c.n, grad_tol[r], grad_mag[r]);
    } else {
      // BGRADA / BGRADB sum the operands as given, whatever the fp16 mode.
      double mag = 0.0;
      for (std::int64_t kk = 0; kk < c.k; ++kk)
        mag += std::fabs(p.bias_grad == ops::GemmBiasGrad::rows_of_a
                             ? inputs.a.get(c.op_a == Op::N ? r + kk * inputs.lda : kk + r * inputs.lda)
                             : inputs.b.get(c.op_b == Op::N ? kk + r * inputs.ldb : r + kk * inputs.ldb));
      tol = eb::gemm_bias_grad_of_operand(c.k, mag);
    }
    const double w = want.bias_grad.get(r), g = got.bias_grad.get(r);
    const double old = c.accumulate_bias_grad ? std::fabs(inputs.bias_grad.get(r)) : 0.0;
    tol = eb::gemm_bias_grad_output(tol, old, w, c.bias_dtype, p.flush);
    if (!(std::fabs(g - w) <= tol) && reported++ < 5)
      ADD_FAILURE() << "bias_grad(" << r << ") = " << g << ", reference " << w << ", tolerance " << tol << "\n  "
                    << c.describe();
  }
}

/// Elements of D / aux outside the m x n matrix (ld padding) still hold their poison.
inline void expect_padding_untouched(const GemmBuffers& inputs, const GemmBuffers& got) {
  const GemmCase& c = inputs.cfg;
  for (std::int64_t j = 0; j < c.n; ++j) {
    for (std::int64_t i = c.m; i < inputs.ldd && i + j * inputs.ldd < got.d.size(); ++i) {
      const std::size_t at = static_cast<std::size_t>(i + j * inputs.ldd) * dtype_size(c.d);
      if (std::memcmp(&got.d.bytes[at], &inputs.d.bytes[at], dtype_size(c.d)) != 0) {
        ADD_FAILURE() << "D padding (" << i << ", " << j << ") was written\n  " << c.describe();
        return;
      }
    }
  }
  if (inputs.problem.aux_out) {
    for (std::int64_t j = 0; j < c.n; ++j) {
      for (std::int64_t i = c.m; i < inputs.aux_ld && i + j * inputs.aux_ld < got.aux.size(); ++i) {
        const std::size_t at = static_cast<std::size_t>(i + j * inputs.aux_ld) * dtype_size(c.aux_dtype);
        if (std::memcmp(&got.aux.bytes[at], &inputs.aux.bytes[at], dtype_size(c.aux_dtype)) != 0) {
          ADD_FAILURE() << "aux padding (" << i << ", " << j << ") was written\n  " << c.describe();
          return;
        }
      }
    }
  }
}

/// Runs gemm() (current ISA cap and threads) and the reference on fresh copies of one random
/// problem, and checks every output. Returns the report of gemm().
inline GemmReport run_and_compare(const GemmCase& cfg, std::mt19937_64& rng) {
  const GemmBuffers inputs = make_buffers(cfg, rng);
  GemmBuffers got = inputs, want = inputs;
  GemmReport report;
  gemm(got.args(), &report);
  const GemmReport ref = run_reference(want);
  expect_close(inputs, got, want);
  expect_padding_untouched(inputs, got);
  EXPECT_EQ(report.fp16_subnormal_inputs, ref.fp16_subnormal_inputs) << cfg.describe();
  return report;
}

}  // namespace ampkit::gemm_test
