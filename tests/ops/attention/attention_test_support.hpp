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

/// The fp32 kernels' error bounds against the double reference (ampkit/numerics/error_bounds.hpp,
/// attention_bounds), with the rounding of both sides to the output dtype. `want` holds the
/// reference's outputs (read for |ref|). For the backward, c.out and c.lse are the inputs both
/// sides read.
inline Tolerances tolerances(const Case& c, const Case& want, bool backward) {
  Tolerances tol;
  const std::int64_t n_buf = c.q.size();
  tol.out.assign(n_buf, 0.0);
  tol.dq.assign(n_buf, 0.0);
  tol.dk.assign(n_buf, 0.0);
  tol.dv.assign(n_buf, 0.0);
  tol.lse.assign(c.lse.size(), 0.0);
  const auto operand = [&](char which) -> const Buffer& {
    return which == 'q' ? c.q : which == 'k' ? c.k : which == 'v' ? c.v : which == 'o' ? c.out : c.dout;
  };
  error_bounds::attention_bounds(
      {c.s.batch, c.s.seq, c.s.heads, c.s.head_dim, c.used_scale()}, backward,
      [&](char which, std::int64_t b, std::int64_t i, std::int64_t x) { return operand(which).get(c.index(b, i, x)); },
      [&](std::int64_t b, std::int64_t h, std::int64_t i) { return c.lse.get(c.lse_index(b, h, i)); },
      [&](char which, std::int64_t b, std::int64_t i, std::int64_t x, double err) {
        const std::int64_t e = c.index(b, i, x);
        if (which == 'o') {
          tol.out[e] = error_bounds::attention_output(err, want.out.get(e), want.out.dtype);
        } else if (which == 'q' && c.has_dq) {
          tol.dq[e] = error_bounds::attention_gradient_output(err, want.dq.get(e), want.dq.dtype);
        } else if (which == 'k' && c.has_dk) {
          tol.dk[e] = error_bounds::attention_gradient_output(err, want.dk.get(e), want.dk.dtype);
        } else if (which == 'v' && c.has_dv) {
          tol.dv[e] = error_bounds::attention_gradient_output(err, want.dv.get(e), want.dv.dtype);
        }
      },
      [&](std::int64_t b, std::int64_t h, std::int64_t i, double err) {
        const std::int64_t r = c.lse_index(b, h, i);
        tol.lse[r] = error_bounds::attention_lse(err, want.lse.get(r));
      });
  return tol;
}

}  // namespace ampkit::attention_testing
