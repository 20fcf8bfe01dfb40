// Causal attention backward, templated over the ISA's vector operations (kernels layer,
// internal). Included by attention_bwd_avx512.cpp (and the other ISA files), which export the
// entry points of attention_kernels.hpp. Per (batch b, head h), owned by one thread, in f32
// scratch: q, s q, k, dout as [T, dp] rows, k and v transposed [d, T]; per block of
// kVectorRowBlock query rows [i0, i1) (scratch: the block's rows of P and dS):
//   P[i, j] = exp_f32(S[i, j] - lse_i), S from attention_forward_impl.hpp's code (the same bits)
//   dP[i, j] = dout_i . v_j (the score tile);  Delta_i = dout_i . out_i (lane partials, Ops::sum)
//   dS = P (dP - Delta);  dq_i = s * sum_{j <= i} dS[i, j] k_j, j in order (written now)
//   dK_j += sum_{i in block, i >= j} dS[i, j] q_i, dV_j += sum P[i, j] dout_i, i in order
// and at the end dk = s dK, dv = dV, each written once. Every sum has one fixed order and no
// (b, h) is shared between threads, so the bits never depend on the thread count.
#pragma once

#include <omp.h>

#include <cstdint>

#include "ampkit/core/threading.hpp"
#include "cpu/attention/attention_kernels.hpp"
#include "cpu/attention/attention_tiles.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kVectorBackwardParallelMinWork = std::int64_t{1} << 15;

// Scratch of one thread. t_pad: seq rounded up to 16, dp: head_dim rounded up to 16.
struct VectorBackwardSlices {
  // [t_pad, dp]: q, qs, k, dout, dk, dv; [d, t_pad]: kt, vt; [B, t_pad]: p, ds; [B, dp]: dq;
  // [dp]: row (a bounce row)
  float *q, *qs, *k, *dout, *dk, *dv, *kt, *vt, *p, *ds, *dq, *row;
  static std::int64_t floats(std::int64_t t_pad, std::int64_t d, std::int64_t dp) {
    constexpr std::int64_t B = kVectorRowBlock;
    return 6 * attention_pad(t_pad * dp) + 2 * attention_pad(d * t_pad) + 2 * attention_pad(B * t_pad) +
           attention_pad(B * dp) + attention_pad(dp);
  }
  VectorBackwardSlices(float* base, std::int64_t t_pad, std::int64_t d, std::int64_t dp) {
    constexpr std::int64_t B = kVectorRowBlock;
    float* next = base;
    auto take = [&](std::int64_t n) {
      float* x = next;
      next += attention_pad(n);
      return x;
    };
    q = take(t_pad * dp), qs = take(t_pad * dp), k = take(t_pad * dp), dout = take(t_pad * dp);
    dk = take(t_pad * dp), dv = take(t_pad * dp), kt = take(d * t_pad), vt = take(d * t_pad);
    p = take(B * t_pad), ds = take(B * t_pad), dq = take(B * dp), row = take(dp);
  }
};

struct BackwardRowIo {
  AttentionLoadRow q, k, v, out, dout;
  AttentionStoreRow dq, dk, dv;
};

template <class O>
void vector_backward_head(const ops::AttentionBackwardProblem& p, const BackwardRowIo& io, std::int64_t b,
                          std::int64_t h, const VectorBackwardSlices& w) {
  using V = typename O::V;
  constexpr std::int64_t L = O::kLanes;
  const std::int64_t t_len = p.seq, d = p.head_dim, c0 = h * d, dp = round_up(d, 16), t_pad = round_up(t_len, 16);
  const bool want_dq = p.dq.data != nullptr, want_dk = p.dk.data != nullptr;
  const bool want_dv = p.dv.data != nullptr, want_ds = want_dq || want_dk;
  auto at = [&](const ops::AttentionInput& x, std::int64_t j) { return b * x.batch_stride + j * x.row_stride + c0; };
  for (std::int64_t j = 0; j < t_len; ++j) {
    float* qj = w.q + j * dp;
    io.q(p.q.data, at(p.q, j), d, qj);
    for (std::int64_t c = 0; c < dp; ++c) w.qs[j * dp + c] = qj[c] * p.scale;
    io.k(p.k.data, at(p.k, j), d, w.row);
    for (std::int64_t c = 0; c < d; ++c) w.kt[c * t_pad + j] = w.row[c];
    if (want_dq)
      for (std::int64_t c = 0; c < dp; ++c) w.k[j * dp + c] = w.row[c];
    io.dout(p.dout.data, at(p.dout, j), d, w.dout + j * dp);
    if (want_ds) {
      io.v(p.v.data, at(p.v, j), d, w.row);
      for (std::int64_t c = 0; c < d; ++c) w.vt[c * t_pad + j] = w.row[c];
    }
  }
  for (std::int64_t j = t_len; j < t_pad; ++j) {  // padding rows and columns: zero
    for (std::int64_t c = 0; c < dp; ++c) w.qs[j * dp + c] = w.dout[j * dp + c] = 0.0f;
    for (std::int64_t c = 0; c < d; ++c) w.kt[c * t_pad + j] = w.vt[c * t_pad + j] = 0.0f;
  }
  for (std::int64_t x = 0; x < t_pad * dp; ++x) w.dk[x] = w.dv[x] = 0.0f;
  for (std::int64_t i0 = 0; i0 < t_len; i0 += kVectorRowBlock) {
    const std::int64_t i1 = i0 + kVectorRowBlock < t_len ? i0 + kVectorRowBlock : t_len, rows = i1 - i0;
    score_rows<O>(w.qs + i0 * dp, dp, w.kt, t_pad, d, i0, rows, i1, w.p, t_pad);
    if (want_ds) score_rows<O>(w.dout + i0 * dp, dp, w.vt, t_pad, d, i0, rows, i1, w.ds, t_pad);
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = i0 + r, n = i + 1, full = (n - 1) / L * L;  // vectors [0, full) complete
      float* pr = w.p + r * t_pad;
      float* dsr = w.ds + r * t_pad;
      const V lse = O::set1(p.lse[(b * p.heads + h) * t_len + i]);
      for (std::int64_t j = 0; j < full; j += L) O::store(pr + j, O::exp(O::sub(O::load(pr + j), lse)));
      O::store(pr + full, O::head_or(O::exp(O::sub(O::load(pr + full), lse)), n - full, 0.0f));
      if (!want_ds) continue;
      io.out(p.out.data, at(p.out, i), d, w.row);
      const float* dor = w.dout + i * dp;
      V dv = O::zero();
      for (std::int64_t c = 0; c < dp; c += L) dv = O::fmadd(O::load(dor + c), O::load(w.row + c), dv);
      const V delta = O::set1(O::sum(dv));
      for (std::int64_t j = 0; j < full; j += L)
        O::store(dsr + j, O::mul(O::load(pr + j), O::sub(O::load(dsr + j), delta)));
      O::store(dsr + full, O::head_or(O::mul(O::load(pr + full), O::sub(O::load(dsr + full), delta)), n - full, 0.0f));
    }
    if (want_dq) {
      causal_sum_rows<O>(w.ds, t_pad, w.k, dp, i0, rows, dp, w.dq, dp);
      for (std::int64_t r = 0; r < rows; ++r)
        io.dq(p.dq.data, b * p.dq.batch_stride + (i0 + r) * p.dq.row_stride + c0, d, w.dq + r * dp, p.scale,
              p.accumulate);
    }
    if (want_dk) transposed_sum_rows<O>(w.ds, t_pad, w.q, dp, i0, i1, dp, w.dk, dp);
    if (want_dv) transposed_sum_rows<O>(w.p, t_pad, w.dout, dp, i0, i1, dp, w.dv, dp);
  }
  for (std::int64_t j = 0; j < t_len; ++j) {
    if (want_dk)
      io.dk(p.dk.data, b * p.dk.batch_stride + j * p.dk.row_stride + c0, d, w.dk + j * dp, p.scale, p.accumulate);
    if (want_dv)
      io.dv(p.dv.data, b * p.dv.batch_stride + j * p.dv.row_stride + c0, d, w.dv + j * dp, 1.0f, p.accumulate);
  }
}

template <class O>
void vector_attention_backward(const ops::AttentionBackwardProblem& p) {
  const std::int64_t t_len = p.seq, d = p.head_dim, pairs = p.batch * p.heads;
  if (pairs == 0 || t_len == 0) return;
  const BackwardRowIo io{row_loader<O>(p.q.dtype),   row_loader<O>(p.k.dtype),    row_loader<O>(p.v.dtype),
                         row_loader<O>(p.out.dtype), row_loader<O>(p.dout.dtype), row_storer<O>(p.dq.dtype),
                         row_storer<O>(p.dk.dtype),  row_storer<O>(p.dv.dtype)};
  const double work =
      static_cast<double>(pairs) * static_cast<double>(t_len) * static_cast<double>(t_len) * static_cast<double>(d);
  int threads = work < static_cast<double>(kVectorBackwardParallelMinWork) ? 1 : ampkit::num_threads();
  if (threads > pairs) threads = static_cast<int>(pairs);
  const std::int64_t t_pad = round_up(t_len, 16), dp = round_up(d, 16);
  const std::int64_t per_thread = attention_pad(VectorBackwardSlices::floats(t_pad, d, dp));
  float* scratch = attention_scratch(per_thread, threads, "attention_backward");
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (std::int64_t pair = 0; pair < pairs; ++pair) {
    const VectorBackwardSlices w(scratch + omp_get_thread_num() * per_thread, t_pad, d, dp);
    vector_backward_head<O>(p, io, pair / p.heads, pair % p.heads, w);
  }
}

}  // namespace
}  // namespace ampkit::cpu
