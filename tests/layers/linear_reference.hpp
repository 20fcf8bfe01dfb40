// The Linear layer's test reference (tests only): plain row-major loops over batch / out / in in
// double, never through gemm, plus the GELU formulas and the error bounds the tests allow.
// Used by linear_test.cpp (which also checks these formulas against finite differences).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "ampkit/core/float16.hpp"
#include "ampkit/ops/gemm.hpp"
#include "support/test_support.hpp"

namespace ampkit::testing {

/// A double value of a reference dot product and the sum of the |terms| (for error bounds).
struct RefSum {
  double value = 0.0;
  double abs_sum = 0.0;
};

inline double gelu_ref(double x, GeluVariant v) {
  if (v == GeluVariant::erf) return 0.5 * x * (1.0 + std::erf(x / std::numbers::sqrt2));
  const double s = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(s * (x + 0.044715 * x * x * x)));
}

/// d gelu / dx.
inline double gelu_grad_ref(double x, GeluVariant v) {
  if (v == GeluVariant::erf)
    return 0.5 * (1.0 + std::erf(x / std::numbers::sqrt2)) +
           x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
  const double s = std::sqrt(2.0 / std::numbers::pi);
  const double t = std::tanh(s * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * s * (1.0 + 3.0 * 0.044715 * x * x);
}

/// y[b, o] = sum_i x[b, i] w[o, i]   (x: [batch, in], w: [out, in], y: [batch, out])
inline std::vector<RefSum> ref_x_wt(const std::vector<double>& x, const std::vector<double>& w, std::int64_t batch,
                                    std::int64_t in, std::int64_t out) {
  std::vector<RefSum> y(static_cast<std::size_t>(batch * out));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t o = 0; o < out; ++o) {
      RefSum& r = y[static_cast<std::size_t>(b * out + o)];
      for (std::int64_t i = 0; i < in; ++i) {
        const double p = x[static_cast<std::size_t>(b * in + i)] * w[static_cast<std::size_t>(o * in + i)];
        r.value += p;
        r.abs_sum += std::fabs(p);
      }
    }
  return y;
}

/// dx[b, i] = sum_o dy[b, o] w[o, i]   (dy: [batch, out], w: [out, in], dx: [batch, in])
inline std::vector<RefSum> ref_dy_w(const std::vector<double>& dy, const std::vector<double>& w, std::int64_t batch,
                                    std::int64_t in, std::int64_t out) {
  std::vector<RefSum> dx(static_cast<std::size_t>(batch * in));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < in; ++i) {
      RefSum& r = dx[static_cast<std::size_t>(b * in + i)];
      for (std::int64_t o = 0; o < out; ++o) {
        const double p = dy[static_cast<std::size_t>(b * out + o)] * w[static_cast<std::size_t>(o * in + i)];
        r.value += p;
        r.abs_sum += std::fabs(p);
      }
    }
  return dx;
}

/// dw[o, i] = sum_b dy[b, o] x[b, i]   (dy: [batch, out], x: [batch, in], dw: [out, in])
inline std::vector<RefSum> ref_dyt_x(const std::vector<double>& dy, const std::vector<double>& x, std::int64_t batch,
                                     std::int64_t in, std::int64_t out) {
  std::vector<RefSum> dw(static_cast<std::size_t>(out * in));
  for (std::int64_t o = 0; o < out; ++o)
    for (std::int64_t i = 0; i < in; ++i) {
      RefSum& r = dw[static_cast<std::size_t>(o * in + i)];
      for (std::int64_t b = 0; b < batch; ++b) {
        const double p = dy[static_cast<std::size_t>(b * out + o)] * x[static_cast<std::size_t>(b * in + i)];
        r.value += p;
        r.abs_sum += std::fabs(p);
      }
    }
  return dw;
}

/// s[c] = sum_r m[r, c]   (m: [rows, cols]) — db from dy, below_db from the GELU gradient.
inline std::vector<RefSum> ref_column_sums(const std::vector<double>& m, std::int64_t rows, std::int64_t cols) {
  std::vector<RefSum> s(static_cast<std::size_t>(cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const double v = m[static_cast<std::size_t>(r * cols + c)];
      s[static_cast<std::size_t>(c)].value += v;
      s[static_cast<std::size_t>(c)].abs_sum += std::fabs(v);
    }
  return s;
}

/// The value a GEMM multiplies for an element of an f16 operand under `mode` (DESIGN.md 5):
/// flush reads subnormals as 0, alt rounds to bf16; other dtypes are read exactly.
inline double gemm_operand(const Buffer& b, std::int64_t i, Fp16Mode mode) {
  const double v = b.get(i);
  if (b.dtype != DType::f16) return v;
  if (mode == Fp16Mode::flush && std::fabs(v) < 0x1p-14) return 0.0;
  if (mode == Fp16Mode::alt) return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(v)));
  return v;
}

/// All elements of `b` as the GEMM sees them.
inline std::vector<double> gemm_operands(const Buffer& b, Fp16Mode mode) {
  std::vector<double> v(static_cast<std::size_t>(b.size()));
  for (std::int64_t i = 0; i < b.size(); ++i) v[static_cast<std::size_t>(i)] = gemm_operand(b, i, mode);
  return v;
}

/// Relative slack for alt mode with an f32 operand beside an f16 one: gemm may round the f32
/// operand to bf16 as well (both readings of "operands rounded to bf16" pass).
inline double alt_mixed_slack(DType a, DType b, Fp16Mode mode) {
  const bool f16 = a == DType::f16 || b == DType::f16, f32 = a == DType::f32 || b == DType::f32;
  return mode == Fp16Mode::alt && f16 && f32 ? 0x1p-8 : 0.0;
}

/// Error bound of a sum of k terms accumulated in fp32 (any order, any blocking) with
/// sum |terms| = abs_sum: about k * 2^-24 * abs_sum, doubled for slack.
inline double fp32_sum_bound(std::int64_t k, double abs_sum) {
  return (2.0 * static_cast<double>(k) + 4.0) * 0x1p-24 * abs_sum;
}

/// What rounding a value to dtype `t` once may add, plus an absolute floor for f16 subnormals
/// (flushed to zero in flush mode).
inline double rounding_bound(DType t, double expected, Fp16Mode mode) {
  double floor = 1e-30;
  if (t == DType::f16) floor = mode == Fp16Mode::flush ? 0x1p-14 : 0x1p-24;
  return unit_roundoff(t) * std::fabs(expected) * 1.0001 + floor;
}

/// Error of evaluating gelu(x) in fp32 (a polynomial or exp-based tanh/erf; generous enough
/// for any decent one, far below the tanh-vs-erf difference of up to 4.7e-4).
inline double gelu_eval_bound(double x) { return 1e-6 * (1.0 + std::fabs(x)); }
/// Same for gelu'(x).
inline double gelu_grad_eval_bound(double x) { return 2e-6 * (1.0 + x * x); }
/// |gelu'| <= 1.13 for both variants.
inline constexpr double kGeluGradMax = 1.2;

}  // namespace ampkit::testing
