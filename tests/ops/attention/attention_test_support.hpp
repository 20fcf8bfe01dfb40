// Helpers of the attention tests (tests of the ops and kernels layers): a case of padded
// [batch, seq, heads * head_dim] buffers with its views and args, and the error bounds of the
// fp32 kernels against the double reference, derived per element from the inputs (score sums
// over head_dim, exp_f32 <= 2 ulp, softmax sums over seq, the output dtype's rounding).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ampkit/ops/attention.hpp"
#include "ops/elementwise/op_test_support.hpp"

namespace ampkit::attention_testing {

using namespace ops_testing;

struct Shape {
  std::int64_t batch, seq, heads, head_dim;
};

/// Dtypes of q, k, v, out, dout, dq, dk, dv.
struct Roles {
  DType q, k, v, out, dout, dq, dk, dv;
};
inline Roles uniform_roles(DType t) { return {t, t, t, t, t, t, t, t}; }

/// Every operand in its own buffer with the same layout: rows `pad` elements longer than
/// heads * head_dim, batches `pad` elements apart beyond their rows. Inputs random N(0, 1),
/// outputs and lse poisoned (so are the pads of every buffer's rows).
struct Case {
  Shape s{};
  std::int64_t cols = 0, row_stride = 0, batch_stride = 0;
  float scale = 0.0f;
  bool accumulate = false;
  bool has_dq = true, has_dk = true, has_dv = true;
  Buffer q, k, v, out, lse, dout, dq, dk, dv;

  std::int64_t index(std::int64_t b, std::int64_t i, std::int64_t c) const {
    return b * batch_stride + i * row_stride + c;
  }
  std::int64_t lse_index(std::int64_t b, std::int64_t h, std::int64_t i) const { return (b * s.heads + h) * s.seq + i; }
  TensorView view(Buffer& x) const {
    TensorView view_x(x.data(), x.dtype, {s.batch, s.seq, cols});
    view_x.strides = {batch_stride, row_stride, 1};
    return view_x;
  }
  TensorView lse_view() { return TensorView(lse.data(), DType::f32, {s.batch, s.heads, s.seq}); }
  AttentionForwardArgs forward_args() {
    AttentionForwardArgs a;
    a.q = view(q), a.k = view(k), a.v = view(v), a.out = view(out), a.lse = lse_view();
    a.heads = static_cast<int>(s.heads);
    a.scale = scale;
    return a;
  }
  AttentionBackwardArgs backward_args() {
    AttentionBackwardArgs a;
    a.q = view(q), a.k = view(k), a.v = view(v), a.out = view(out), a.lse = lse_view();
    a.dout = view(dout);
    if (has_dq) a.dq = view(dq);
    if (has_dk) a.dk = view(dk);
    if (has_dv) a.dv = view(dv);
    a.heads = static_cast<int>(s.heads);
    a.scale = scale;
    a.accumulate = accumulate;
    return a;
  }
  /// The resolved scale the kernels use.
  double used_scale() const {
    return scale > 0.0f ? double{scale} : double{static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)))};
  }
};

inline Case make_case(std::mt19937_64& rng, Shape s, Roles r, std::int64_t pad) {
  Case c;
  c.s = s;
  c.cols = s.heads * s.head_dim;
  c.row_stride = c.cols + pad;
  c.batch_stride = s.seq * c.row_stride + pad;
  const std::int64_t n = s.batch * c.batch_stride;
  c.q = random_buffer(rng, r.q, n);
  c.k = random_buffer(rng, r.k, n);
  c.v = random_buffer(rng, r.v, n);
  c.dout = random_buffer(rng, r.dout, n);
  c.out = Buffer(r.out, n);
  c.dq = Buffer(r.dq, n);
  c.dk = Buffer(r.dk, n);
  c.dv = Buffer(r.dv, n);
  c.lse = Buffer(DType::f32, s.batch * s.heads * s.seq);
  for (Buffer* b : {&c.out, &c.dq, &c.dk, &c.dv, &c.lse}) b->poison();
  return c;
}

/// Fills the non-pad elements of x with N(0, 1) values (accumulate-mode starting values).
inline void fill_elements(std::mt19937_64& rng, const Case& c, Buffer& x) {
  std::normal_distribution<double> dist(0.0, 1.0);
  for (std::int64_t b = 0; b < c.s.batch; ++b)
    for (std::int64_t i = 0; i < c.s.seq; ++i)
      for (std::int64_t col = 0; col < c.cols; ++col) x.set(c.index(b, i, col), dist(rng));
}

/// Per-element tolerances of a case's outputs (indexed like the buffers; 0 on pads, where both
/// sides must be the same NaN).
struct Tolerances {
  std::vector<double> out, lse, dq, dk, dv;
};

/// The fp32 kernels' error bounds against the double reference, times 2, plus the rounding of
/// both sides to the output dtype. `want` holds the reference's outputs (read for |ref|). For
/// the backward, c.out and c.lse are the inputs both sides read.
///   scores: |S~ - S| <= eS = (d + 3) u s sum_c |q k|   (q scaled first, sum over d in order)
///   P~ = exp_f32(S~ - m): relative error dP <= 2 eS_max + u |S - m| + 4 u  (forward, m = row max)
///                         or eS + u |S - lse| + 4 u                       (backward, lse given)
///   l (softmax denominator): relative error <= max dP + (n + 2) u
///   out = sum_j P v / l: error <= sum_j P |v| (dP_j + (n + 1) u) + |out| (dl + 2 u)
///   dP = dout . v, Delta = dout . out: errors (d + 3) u sum |.|
///   dS = P (dP - Delta): error eD <= P |dP - Delta| (dP + 2 u) + P (edP + eDelta)
///   dq = s sum_j dS k: error <= s sum_j (eD + (n + 1) u |dS|) |k| + 2 u |dq|; dk alike over i
///   dv = sum_i P dout: error <= sum_i P |dout| (dP + (T + 1) u) + 2 u |dv|
inline Tolerances tolerances(const Case& c, const Case& want, bool backward) {
  const double u = kU32, s = c.used_scale();
  const std::int64_t t_len = c.s.seq, d = c.s.head_dim, n_buf = c.q.size();
  Tolerances tol;
  tol.out.assign(n_buf, 0.0);
  tol.dq.assign(n_buf, 0.0);
  tol.dk.assign(n_buf, 0.0);
  tol.dv.assign(n_buf, 0.0);
  tol.lse.assign(c.lse.size(), 0.0);
  std::vector<double> sc(t_len * t_len), esc(t_len * t_len), prob(t_len * t_len), dprob(t_len * t_len),
      ds(t_len * t_len), eds(t_len * t_len);
  auto finish = [&](const Buffer& ref, std::vector<double>& t, std::int64_t e, double err) {
    const double uo = unit_roundoff(ref.dtype);
    t[e] = 2.0 * err + 2.0 * uo * std::fabs(ref.get(e)) + 2.0 * subnormal_slack(ref.dtype);
  };
  for (std::int64_t b = 0; b < c.s.batch; ++b)
    for (std::int64_t h = 0; h < c.s.heads; ++h) {
      const std::int64_t c0 = h * d;
      for (std::int64_t i = 0; i < t_len; ++i) {
        double m = -INFINITY, emax = 0.0;
        for (std::int64_t j = 0; j <= i; ++j) {
          double dot = 0.0, mag = 0.0;
          for (std::int64_t x = c0; x < c0 + d; ++x) {
            const double a = c.q.get(c.index(b, i, x)), kk = c.k.get(c.index(b, j, x));
            dot += a * kk;
            mag += std::fabs(a * kk);
          }
          sc[i * t_len + j] = s * dot;
          esc[i * t_len + j] = static_cast<double>(d + 3) * u * s * mag;
          m = std::max(m, s * dot);
          emax = std::max(emax, esc[i * t_len + j]);
        }
        // Forward: the shift is the row max; backward: the saved lse.
        const double shift = backward ? c.lse.get(c.lse_index(b, h, i)) : m;
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
              const double pv = prob[i * t_len + j] * c.v.get(c.index(b, j, x));
              o += pv;
              err += std::fabs(pv) * (dprob[i * t_len + j] + static_cast<double>(n + 1) * u);
            }
            finish(want.out, tol.out, c.index(b, i, x), err + std::fabs(o) * (dl + 2.0 * u));
          }
          const std::int64_t r = c.lse_index(b, h, i);
          tol.lse[r] = 2.0 * (emax + dl) + 2.0 * u * std::fabs(want.lse.get(r));
          continue;
        }
        double delta = 0.0, edelta = 0.0;
        for (std::int64_t x = c0; x < c0 + d; ++x) {
          const double t = c.dout.get(c.index(b, i, x)) * c.out.get(c.index(b, i, x));
          delta += t;
          edelta += std::fabs(t);
        }
        edelta *= static_cast<double>(d + 3) * u;
        for (std::int64_t j = 0; j <= i; ++j) {
          const std::int64_t ij = i * t_len + j;
          double dp = 0.0, edp = 0.0;
          for (std::int64_t x = c0; x < c0 + d; ++x) {
            const double t = c.dout.get(c.index(b, i, x)) * c.v.get(c.index(b, j, x));
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
          const std::int64_t e = c.index(b, r, x);
          double eq = 0.0, ek = 0.0, ev = 0.0;
          for (std::int64_t j = 0; j <= r; ++j)
            eq += (eds[r * t_len + j] + big * std::fabs(ds[r * t_len + j])) * std::fabs(c.k.get(c.index(b, j, x)));
          for (std::int64_t i = r; i < t_len; ++i) {
            const std::int64_t ir = i * t_len + r;
            ek += (eds[ir] + big * std::fabs(ds[ir])) * std::fabs(c.q.get(c.index(b, i, x)));
            ev += prob[ir] * std::fabs(c.dout.get(c.index(b, i, x))) * (dprob[ir] + big);
          }
          if (c.has_dq) finish(want.dq, tol.dq, e, s * eq + 2.0 * u * std::fabs(want.dq.get(e)));
          if (c.has_dk) finish(want.dk, tol.dk, e, s * ek + 2.0 * u * std::fabs(want.dk.get(e)));
          if (c.has_dv) finish(want.dv, tol.dv, e, ev + 2.0 * u * std::fabs(want.dv.get(e)));
        }
    }
  return tol;
}

}  // namespace ampkit::attention_testing
