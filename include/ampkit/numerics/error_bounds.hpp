// The error bounds every kernel is held to against its reference (numerics layer, public header):
// how far a kernel's fp32 result may lie from the reference's (plain loops, double sums, one
// rounding), given the dtypes, the reduction length and sums of magnitudes, so cancellation cannot
// break a bound. Used by `ampkit check kernels` (tools/ampkit/check/) and by the test suite's
// harnesses (tests/cpu/gemm, tests/cpu/norm, tests/ops/...), so each formula is written once. It
// is public because the tools layer sees public headers only, and because anyone porting or
// replacing a kernel can hold it to the same numbers. docs/NUMERICS.md derives each bound.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ampkit/core/dtype.hpp"

namespace ampkit::error_bounds {

/// fp32 unit roundoff: all kernel arithmetic is fp32 (or better).
inline constexpr double kU32 = 0x1p-24;

/// Unit roundoff of a dtype (half an ulp of 1): 2^-24, 2^-8, 2^-11 for f32, bf16, f16.
inline double unit_roundoff(DType t) { return t == DType::f32 ? kU32 : t == DType::bf16 ? 0x1p-8 : 0x1p-11; }
/// The smallest positive subnormal of a dtype: absolute slack for outputs near zero.
inline double smallest_subnormal(DType t) { return t == DType::f32 ? 0x1p-149 : t == DType::bf16 ? 0x1p-133 : 0x1p-24; }
/// Absolute error of rounding to `t` below its normal range: half the fp16 subnormal spacing
/// (bf16 and f32 share fp32's exponent range, so the fp32 result is never below theirs).
inline double subnormal_slack(DType t) { return t == DType::f16 ? 0x1p-25 : 0.0; }
/// Both sides round their fp32 (kernel) or exact (reference) value once to `t`: the kernel's
/// error `err` before rounding, counted twice, plus two roundings of |ref|.
inline double rounded_twice(double err, double ref, DType t) {
  return 2.0 * err + 2.0 * unit_roundoff(t) * std::fabs(ref) + 2.0 * subnormal_slack(t);
}

// ---- GEMM and its epilogues (docs/NUMERICS.md, "GEMM and epilogues") ------------------------

/// The activation of an epilogue, as far as its error is concerned.
enum class GemmActivationBound { none, relu, gelu, dgelu, drelu };

/// fp32 pre-activation error of one element of D: k multiply-adds and the alpha, beta and bias
/// roundings. s = |alpha| sum_p |a_ip b_pj| + |beta C_ij| + |bias_i| (operands as the fp16 mode
/// sees them).
inline double gemm_accumulation(std::int64_t k, double s) { return (static_cast<double>(k) + 4.0) * kU32 * s; }
/// The activation's effect on that error: GELU's slope (|gelu'| <= 1.13) and its own fp32
/// evaluation (64 u s); DGELU multiplies by gelu'(aux) (<= 1.2) and evaluates with |aux|.
inline double gemm_activation(GemmActivationBound act, double pre, double s, double aux_abs = 0.0) {
  switch (act) {
    case GemmActivationBound::gelu: return 1.13 * pre + 64.0 * kU32 * s;
    case GemmActivationBound::dgelu: return 1.2 * pre + 64.0 * kU32 * s * (1.0 + aux_abs);
    default: return pre;  // none, RELU (slope 1), DRELU (a mask)
  }
}
/// Tolerance of D (or aux) against the reference: the fp32 error `err`, then one rounding of
/// each side to `d`, the dtype's smallest subnormal, and 2^-14 in fp16 flush mode (a value at
/// the subnormal threshold may flush on one side only).
inline double gemm_output(double err, double ref, DType d, bool fp16_flush) {
  const double u = unit_roundoff(d);
  return err * (1.0 + u) + 2.0 * u * std::fabs(ref) + smallest_subnormal(d) + (fp16_flush ? 0x1p-14 : 0.0);
}
/// DGELU_BGRAD / DRELU_BGRAD: the row sum of D's fp32 values over n columns. sum_err: the sum of
/// the row's per-element errors (gemm_activation); sum_mag: sum of |D| + those errors.
inline double gemm_bias_grad_of_d(std::int64_t n, double sum_err, double sum_mag) {
  return sum_err + (static_cast<double>(n) + 2.0) * kU32 * sum_mag;
}
/// BGRADA / BGRADB: an operand summed over k in fp32 blocks of 256 along k (double across
/// blocks). mag: sum over k of |operand| as given.
inline double gemm_bias_grad_of_operand(std::int64_t k, double mag) {
  return (static_cast<double>(std::min<std::int64_t>(k, 256)) + 2.0) * kU32 * mag;
}
/// Tolerance of a bias gradient: its sum error, the accumulate add of `old_abs` (0 without
/// accumulate), one rounding of each side to `t`, slack as gemm_output.
inline double gemm_bias_grad_output(double err, double old_abs, double ref, DType t, bool fp16_flush) {
  return err + kU32 * old_abs + 2.0 * unit_roundoff(t) * std::fabs(ref) + smallest_subnormal(t) +
         (fp16_flush ? 0x1p-14 : 0.0);
}

// ---- LayerNorm and RMSNorm (docs/NUMERICS.md, "Error bounds the tests use") ------------------

/// Longest chain of fp32 additions a row reduction over n terms may have: every kernel keeps at
/// least 8 partial sums (one AVX2 vector) each over n/8 terms, plus the adds that combine them.
inline double norm_row_chain(std::int64_t n) { return static_cast<double>(n) / 8.0 + 16.0; }
/// Same for dgamma/dbeta over `rows` rows: blocks of 32 rows, one add per block, the accumulate add.
inline double norm_column_chain(std::int64_t rows) { return 40.0 + static_cast<double>(rows) / 32.0; }

/// One row's statistics in double and the fp32 errors of the kernel's (docs/NUMERICS.md derives
/// them). LayerNorm (shifted sums, the shift K within sigma/2 of mu or refined once):
/// e_mu = (k + 3) u (D + sigma/2 + (k + 4) u A), e_r = ((3k + 8)/2 + 3) u, e_c = u; RMSNorm:
/// e_mu = 0, e_r = ((k + 6)/2 + 3) u, e_c = 0. A = mean|x|, D = mean|x - mu|, sigma^2 = mean
/// (x - mu)^2, r = 1/sqrt(var + eps) (RMSNorm: mean x^2 in place of var).
struct NormRowBound {
  double mu = 0.0, e_mu = 0.0, r = 0.0, e_r = 0.0, e_c = 0.0;
};
/// x(j) returns element j of the row (as stored); n >= 1.
template <class RowElement>
NormRowBound norm_row_bound(RowElement x, std::int64_t n, bool rms, double eps) {
  const double k = norm_row_chain(n), dn = static_cast<double>(n);
  double s = 0.0, s_abs = 0.0;
  for (std::int64_t j = 0; j < n; ++j) s += x(j), s_abs += std::fabs(x(j));
  NormRowBound b;
  b.mu = rms ? 0.0 : s / dn;
  double s_sq = 0.0, dev = 0.0;
  for (std::int64_t j = 0; j < n; ++j) {
    const double d = x(j) - b.mu;
    s_sq += d * d;
    dev += std::fabs(d);
  }
  const double sigma = std::sqrt(s_sq / dn);
  b.e_mu = rms ? 0.0 : (k + 3.0) * kU32 * (dev / dn + sigma / 2.0 + (k + 4.0) * kU32 * (s_abs / dn));
  b.r = 1.0 / std::sqrt(s_sq / dn + eps);
  b.e_r = ((rms ? k + 6.0 : 3.0 * k + 8.0) / 2.0 + 3.0) * kU32;
  b.e_c = rms ? 0.0 : kU32;
  return b;
}
/// Tolerance of y = (x - mu) r gamma + beta: E_y = |gamma| (|xhat| (e_r + 3u) + r e_mu + e_c)
/// + u |beta| (gamma_abs = 1 and beta_abs = 0 when absent), rounded to y's dtype on both sides.
inline double norm_y(const NormRowBound& b, double x, double gamma_abs, double beta_abs, double ref, DType y) {
  const double xhat = std::fabs(x - b.mu) * b.r;
  const double e_y = gamma_abs * (xhat * (b.e_r + 3.0 * kU32) + b.r * b.e_mu + b.e_c) + kU32 * beta_abs;
  return 2.0 * unit_roundoff(y) * std::fabs(ref) + 2.0 * e_y + subnormal_slack(y);
}
/// Tolerance of the stored (f32) mean and rstd.
inline double norm_mean(const NormRowBound& b) { return 2.0 * kU32 * std::fabs(b.mu) + 2.0 * b.e_mu; }
inline double norm_rstd(const NormRowBound& b) { return 2.0 * b.r * (b.e_r + kU32); }
/// Tolerance of dx: g = gamma dy, xhat from the given f32 mean and rstd r; mean_g = mean over
/// the row of |g|, mean_g_xhat = mean of |g xhat|; (k + 8) u covers the row sums of g and
/// g xhat, the rounding of xhat and g, and the fused update.
inline double norm_dx(std::int64_t n, double r, double g_abs, double xhat_abs, double mean_g, double mean_g_xhat,
                      double ref, DType x) {
  const double e_dx = r * (norm_row_chain(n) + 8.0) * kU32 * (g_abs + mean_g + xhat_abs * mean_g_xhat);
  return 2.0 * unit_roundoff(x) * std::fabs(ref) + 2.0 * e_dx + subnormal_slack(x);
}
/// Tolerance of dgamma (sum = sum over rows of |dy xhat|, extra = 3) or dbeta (sum = sum over
/// rows of |dy|, extra = 1); old_abs: |previous value| with accumulate, else 0.
inline double norm_param_grad(std::int64_t rows, double extra, double sum, double old_abs, double ref, DType p) {
  const double e = (norm_column_chain(rows) + extra) * kU32 * sum + kU32 * old_abs;
  return 2.0 * unit_roundoff(p) * std::fabs(ref) + 2.0 * e + subnormal_slack(p);
}

// ---- The training ops ------------------------------------------------------------------------

/// Elementwise add / add_row_vector / add_accumulate / scale: one fp32 result (one fp32
/// rounding from the exact value) rounded to out; the reference rounds the exact value once.
inline double elementwise_output(double ref, DType out) {
  return 2.0 * (unit_roundoff(out) + kU32) * std::fabs(ref) + 2.0 * subnormal_slack(out);
}
/// sum_rows over `rows` rows: an fp32 chain of a 32-row block, one add per block and the
/// accumulate add. mag: sum of |x| over the rows plus |old| when accumulating.
inline double sum_rows_output(std::int64_t rows, double mag, double ref, DType out) {
  const double chain = 34.0 + static_cast<double>(rows) / 32.0;
  return chain * kU32 * mag + 2.0 * unit_roundoff(out) * std::fabs(ref) + 2.0 * subnormal_slack(out);
}
/// GELU forward / backward (src/cpu/math/gelu_math.hpp): gelu within 8 u |x|, gelu' within 8 u
/// (absolute, times |dy|), two more fp32 roundings, then one rounding to out on both sides.
inline double gelu_forward_output(double x, double ref, DType out) {
  return 10.0 * kU32 * std::fabs(x) + 2.0 * unit_roundoff(out) * std::fabs(ref) + 2.0 * subnormal_slack(out);
}
inline double gelu_backward_output(double dy, double ref, DType out) {
  return 10.0 * kU32 * std::fabs(dy) + 2.0 * unit_roundoff(out) * std::fabs(ref) + 2.0 * subnormal_slack(out);
}
/// embedding_backward: an fp32 sum from 0 of `count` values in token order (count includes the
/// old value when accumulating), mag their sum of magnitudes; one rounding to dtable.
inline double embedding_backward_output(double count, double mag, double ref, DType out) {
  return (count + 1.0) * kU32 * mag + 2.0 * unit_roundoff(out) * std::fabs(ref) + 2.0 * subnormal_slack(out);
}
/// softmax_cross_entropy_forward: lse of a row of `classes` logits. The sum of exps is a block of
/// 256 fp32 adds, then one add per block, exp_f32 within 2 ulp; its relative error is lse's
/// absolute error. The loss (mean in double) inherits the worst row's: loss_tolerance(worst).
inline double cross_entropy_lse(std::int64_t classes, double ref) {
  return (260.0 + static_cast<double>(classes) / 256.0) * kU32 + 2.0 * kU32 * std::fabs(ref);
}
inline double cross_entropy_loss(double worst_lse_tolerance, double ref) {
  return worst_lse_tolerance + 2.0 * kU32 * std::fabs(ref);
}
/// softmax_cross_entropy_backward, from the same lse: dlogits = scale (p - onehot) with
/// scale = |dloss| / rows, p = exp(logit - lse) to 2 ulp, then one rounding.
inline double cross_entropy_dlogits(double scale, double logit, double lse, double ref, DType out) {
  const double shift = std::fabs(logit - lse), prob = std::exp(logit - lse);
  return scale * (2.0 * prob * (shift + 4.0) * kU32 + kU32) + 2.0 * unit_roundoff(out) * std::fabs(ref) +
         2.0 * subnormal_slack(out);
}

/// AdamW, one element (the exact step from the inputs, and what the fp32 chain may lose): m and v
/// from their terms, param from m's error over the denominator, the denominator's relative error
/// (v's, halved by sqrt, and four more roundings), the products and the two subtractions.
/// Each fp32 rounding of a value w is off by <= u |w| + 2^-150 (half the subnormal spacing: the
/// relative part alone fails once g^2, v or m is an fp32 subnormal), so m (5 roundings: g, c1 g,
/// b1 m, the sum, the reference's) and v (6: g, g^2, c2 g^2, b2 v, the sum, the reference's) carry
/// 5 and 6 times 2^-150; v's absolute part moves sqrt(v / bc2) by <= sqrt(6 2^-150 / bc2)
/// (docs/NUMERICS.md, "Error bounds of the training ops").
struct AdamWBound {
  double m = 0.0, v = 0.0, param = 0.0;
};
struct AdamWHyper {
  double lr, beta1, beta2, eps, weight_decay, grad_scale;
  std::int64_t step;
};
inline AdamWBound adamw_step(const AdamWHyper& h, double param, double grad, double m, double v, double param_ref) {
  const double u = kU32, b1 = h.beta1, b2 = h.beta2;
  const double bc1 = 1.0 - std::pow(b1, static_cast<double>(h.step));
  const double bc2 = 1.0 - std::pow(b2, static_cast<double>(h.step));
  const double g = grad * h.grad_scale;
  const double m_terms = b1 * std::fabs(m) + (1.0 - b1) * std::fabs(g);
  const double v_terms = b2 * v + (1.0 - b2) * g * g;
  const double m_new = b1 * m + (1.0 - b1) * g;
  const double denom = std::sqrt(v_terms / bc2) + h.eps;
  const double adam = h.lr * (m_new / bc1) / denom;
  const double decay = h.lr * h.weight_decay * std::fabs(param);
  AdamWBound b;
  constexpr double kHalfSubnormalStep = 0x1p-150;
  b.m = 5.0 * u * m_terms + 5.0 * kHalfSubnormalStep;
  b.v = 6.0 * u * v_terms + 6.0 * kHalfSubnormalStep;
  const double v_abs_denom = denom > 0.0 ? std::sqrt(6.0 * kHalfSubnormalStep / bc2) / denom : 0.0;
  const double rel_denom = (v_terms > 0.0 ? 3.0 * u : 0.0) + 4.0 * u + v_abs_denom;
  b.param = h.lr / bc1 * b.m / denom + std::fabs(adam) * (rel_denom + 4.0 * u) + 4.0 * u * decay +
            2.0 * u * std::fabs(param_ref) + 2.0 * u * (std::fabs(adam) + decay);
  return b;
}
/// SGD with momentum, one element: d = momentum buf + grad grad_scale + weight_decay param (buf
/// = 0 without a buffer), four fp32 roundings of its terms and one of d; param -= lr d.
struct SgdBound {
  double buf = 0.0, param = 0.0;
};
inline SgdBound sgd_step(double lr, double momentum, double weight_decay, double grad_scale, double param, double grad,
                         double buf, double param_ref) {
  const double u = kU32;
  const double g_terms = std::fabs(grad * grad_scale) + std::fabs(weight_decay * param);
  const double d = momentum * buf + grad * grad_scale + weight_decay * param;
  SgdBound b;
  b.buf = 4.0 * u * (std::fabs(momentum * buf) + g_terms) + u * std::fabs(d);
  b.param = lr * (b.buf + 2.0 * u * std::fabs(d)) + 2.0 * u * std::fabs(param_ref);
  return b;
}
/// global_grad_norm: fp64 sums of squares over `count` elements (blocks of 4096, 8 lanes), sqrt.
inline double global_grad_norm(std::int64_t count, double ref) {
  return (static_cast<double>(count) + 8.0) * 0x1p-52 * std::fabs(ref);
}

/// Causal attention (docs/ATTENTION.md): the fp32 kernel's error bound against the double
/// reference, before the outputs' rounding (callers add rounded_twice(err, ref, dtype)); lse's
/// tolerance is complete. Per (batch, head, row i), with s the scale, d head_dim, T seq, u = 2^-24:
///   scores: |S~ - S| <= eS = (d + 3) u s sum_c |q k|   (q scaled first, sum over d in order)
///   P~ = exp_f32(S~ - m): relative error dP <= 2 eS_max + u |S - m| + 4 u  (forward, m = row max)
///                         or eS + u |S - lse| + 4 u                       (backward, lse given)
///   l (softmax denominator): relative error <= max dP + (n + 2) u
///   out = sum_j P v / l: error <= sum_j P |v| (dP_j + (n + 1) u) + |out| (dl + 2 u)
///   dP = dout . v, Delta = dout . out: errors (d + 3) u sum |.|
///   dS = P (dP - Delta): error eD <= P |dP - Delta| (dP + 2 u) + P (edP + eDelta)
///   dq = s sum_j dS k: error <= s sum_j (eD + (T + 1) u |dS|) |k| + 2 u |dq|; dk alike over i
///   dv = sum_i P dout: error <= sum_i P |dout| (dP + (T + 1) u) + 2 u |dv|
/// Operands are read through get(operand, b, i, col) (operand: 'q', 'k', 'v', 'o' (out), 'g'
/// (dout)) and lse(b, h, i) (backward only: the lse both sides read). The forward reports
/// out_err('o', b, i, col, err) and lse_tol(b, h, i, max_err_before_ref_rounding) — see below;
/// the backward reports out_err('q' | 'k' | 'v', b, i, col, err) with err excluding 2u|ref|,
/// which the caller adds from its reference (attention_gradient_output).
struct AttentionShape {
  std::int64_t batch, seq, heads, head_dim;
  double scale;  // the one the kernels use
};
template <class Get, class Lse, class Out, class LseOut>
void attention_bounds(const AttentionShape& sh, bool backward, Get get, Lse lse, Out out_err, LseOut lse_err) {
  const double u = kU32, s = sh.scale;
  const std::int64_t t_len = sh.seq, d = sh.head_dim;
  const auto sq = static_cast<std::size_t>(t_len * t_len);
  std::vector<double> esc(sq), prob(sq), dprob(sq), ds(sq), eds(sq), sc(sq);
  for (std::int64_t b = 0; b < sh.batch; ++b)
    for (std::int64_t h = 0; h < sh.heads; ++h) {
      const std::int64_t c0 = h * d;
      for (std::int64_t i = 0; i < t_len; ++i) {
        double m = -INFINITY, emax = 0.0;
        for (std::int64_t j = 0; j <= i; ++j) {
          double dot = 0.0, mag = 0.0;
          for (std::int64_t x = c0; x < c0 + d; ++x) {
            const double a = get('q', b, i, x), kk = get('k', b, j, x);
            dot += a * kk;
            mag += std::fabs(a * kk);
          }
          sc[i * t_len + j] = s * dot;
          esc[i * t_len + j] = static_cast<double>(d + 3) * u * s * mag;
          m = std::max(m, s * dot);
          emax = std::max(emax, esc[i * t_len + j]);
        }
        // Forward: the shift is the row max; backward: the saved lse.
        const double shift = backward ? lse(b, h, i) : m;
        double l = 0.0, dl = 0.0;
        for (std::int64_t j = 0; j <= i; ++j) {
          const std::int64_t ij = i * t_len + j;
          const double arg = sc[ij] - shift;
          prob[ij] = std::exp(arg);
          dprob[ij] = (backward ? esc[ij] : 2.0 * emax) + u * std::fabs(arg) + 4.0 * u;
          l += prob[ij];
          dl = std::max(dl, dprob[ij]);
        }
        const std::int64_t n = i + 1;
        if (!backward) {
          dl += static_cast<double>(n + 2) * u;
          for (std::int64_t j = 0; j <= i; ++j) prob[i * t_len + j] /= l;
          for (std::int64_t x = c0; x < c0 + d; ++x) {
            double err = 0.0, o = 0.0;
            for (std::int64_t j = 0; j <= i; ++j) {
              const double pv = prob[i * t_len + j] * get('v', b, j, x);
              o += pv;
              err += std::fabs(pv) * (dprob[i * t_len + j] + static_cast<double>(n + 1) * u);
            }
            out_err('o', b, i, x, err + std::fabs(o) * (dl + 2.0 * u));
          }
          lse_err(b, h, i, 2.0 * (emax + dl));
          continue;
        }
        double delta = 0.0, edelta = 0.0;
        for (std::int64_t x = c0; x < c0 + d; ++x) {
          const double t = get('g', b, i, x) * get('o', b, i, x);
          delta += t;
          edelta += std::fabs(t);
        }
        edelta *= static_cast<double>(d + 3) * u;
        for (std::int64_t j = 0; j <= i; ++j) {
          const std::int64_t ij = i * t_len + j;
          double dp = 0.0, edp = 0.0;
          for (std::int64_t x = c0; x < c0 + d; ++x) {
            const double t = get('g', b, i, x) * get('v', b, j, x);
            dp += t;
            edp += std::fabs(t);
          }
          edp *= static_cast<double>(d + 3) * u;
          ds[ij] = prob[ij] * (dp - delta);
          eds[ij] = prob[ij] * (std::fabs(dp - delta) * (dprob[ij] + 2.0 * u) + edp + edelta);
        }
      }
      if (!backward) continue;
      const double big = static_cast<double>(t_len + 1) * u;
      for (std::int64_t r = 0; r < t_len; ++r)
        for (std::int64_t x = c0; x < c0 + d; ++x) {
          double eq = 0.0, ek = 0.0, ev = 0.0;
          for (std::int64_t j = 0; j <= r; ++j)
            eq += (eds[r * t_len + j] + big * std::fabs(ds[r * t_len + j])) * std::fabs(get('k', b, j, x));
          for (std::int64_t i = r; i < t_len; ++i) {
            const std::int64_t ir = i * t_len + r;
            ek += (eds[ir] + big * std::fabs(ds[ir])) * std::fabs(get('q', b, i, x));
            ev += prob[ir] * std::fabs(get('g', b, i, x)) * (dprob[ir] + big);
          }
          out_err('q', b, r, x, s * eq);
          out_err('k', b, r, x, s * ek);
          out_err('v', b, r, x, ev);
        }
    }
}
/// Tolerance of out (forward) from attention_bounds' err: both sides round to out's dtype.
inline double attention_output(double err, double ref, DType t) { return rounded_twice(err, ref, t); }
/// Tolerance of dq / dk / dv: the kernel's fp32 result is rounded (2 u |ref|) before the dtype's.
inline double attention_gradient_output(double err, double ref, DType t) {
  return rounded_twice(err + 2.0 * kU32 * std::fabs(ref), ref, t);
}
/// Tolerance of lse from attention_bounds' lse error.
inline double attention_lse(double err, double ref) { return err + 2.0 * kU32 * std::fabs(ref); }

}  // namespace ampkit::error_bounds
