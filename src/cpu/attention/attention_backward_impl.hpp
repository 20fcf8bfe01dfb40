// Causal attention backward, templated over the ISA's vector operations (kernels layer,
// internal). Included by attention_bwd_avx512.cpp (and the other ISA files), which export the
// entry points of attention_kernels.hpp. Per (batch b, head h), owned by one thread, in f32
// scratch: q, s q, k, dout as [T, dp] rows, k and v transposed [dp, T] (16 x 16 blocks); per block of
// kVectorRowBlock query rows [i0, i1) (scratch: the block's rows of P and dS):
//   P[i, j] = Ops::exp(S[i, j] - lse_i), S from the forward's code (score_rows: the same bits)
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
  // [t_pad, dp]: q, qs, k, dout, dk, dv; [dp, t_pad]: kt, vt; [B, t_pad]: p, ds; [B, dp]: rows (out
  // rows, then dq rows)
  float *q, *qs, *k, *dout, *dk, *dv, *kt, *vt, *p, *ds, *rows;
  std::int64_t used;  // floats of the slice
  static std::int64_t floats(std::int64_t t_pad, std::int64_t dp) {
    return VectorBackwardSlices(nullptr, t_pad, dp).used;
  }
  VectorBackwardSlices(float* base, std::int64_t t_pad, std::int64_t dp) {
    constexpr std::int64_t B = kVectorRowBlock;
    ScratchCarver c{base};
    q = c.take(t_pad * dp), qs = c.take(t_pad * dp), k = c.take(t_pad * dp), dout = c.take(t_pad * dp);
    dk = c.take(t_pad * dp), dv = c.take(t_pad * dp), kt = c.take(dp * t_pad), vt = c.take(dp * t_pad);
    p = c.take(B * t_pad), ds = c.take(B * t_pad), rows = c.take(B * dp);
    used = c.used;
  }
};

struct BackwardRowIo {
  AttentionLoadRows q, k, v, out, dout;
  AttentionStoreRows dq, dk, dv;
};

// Hints the operand rows of head h of batch b into the cache (issued for the next head while
// this one computes).
inline void prefetch_backward_head(const ops::AttentionBackwardProblem& p, std::int64_t b, std::int64_t h) {
  const std::int64_t c0 = h * p.head_dim;
  for (const ops::AttentionInput* x : {&p.q, &p.k, &p.v, &p.out, &p.dout})
    prefetch_rows(x->data, x->dtype, b * x->batch_stride + c0, x->row_stride, p.seq, p.head_dim, false);
  for (const ops::AttentionOutput* x : {&p.dq, &p.dk, &p.dv})
    if (x->data != nullptr)
      prefetch_rows(x->data, x->dtype, b * x->batch_stride + c0, x->row_stride, p.seq, p.head_dim, true);
}

template <class O>
void vector_backward_head(const ops::AttentionBackwardProblem& p, const BackwardRowIo& io, std::int64_t b,
                          std::int64_t h, const VectorBackwardSlices& w, std::int64_t next) {
  using V = typename O::V;
  constexpr std::int64_t L = O::kLanes;
  const std::int64_t t_len = p.seq, d = p.head_dim, c0 = h * d, dp = round_up(d, 16), t_pad = round_up(t_len, 16);
  const bool want_dq = p.dq.data != nullptr, want_dk = p.dk.data != nullptr;
  const bool want_dv = p.dv.data != nullptr, want_ds = want_dq || want_dk;
  const std::int64_t all = t_len * dp, padded = t_pad * dp;
  auto first = [&](const auto& x, std::int64_t i) { return b * x.batch_stride + i * x.row_stride + c0; };
  // Rows j < T of q, k, dout (zero up to t_pad); qs = s q; kt = k^T, vt = v^T (v bounced via dv).
  io.q(p.q.data, first(p.q, 0), p.q.row_stride, t_len, d, w.q, dp);
  io.k(p.k.data, first(p.k, 0), p.k.row_stride, t_len, d, w.k, dp);
  io.dout(p.dout.data, first(p.dout, 0), p.dout.row_stride, t_len, d, w.dout, dp);
  for (std::int64_t x = all; x < padded; ++x) w.q[x] = w.k[x] = w.dout[x] = 0.0f;
  const V scale = O::set1(p.scale);
  for (std::int64_t x = 0; x < padded; x += L) O::store(w.qs + x, O::mul(O::load(w.q + x), scale));
  transpose_rows<O>(w.k, dp, t_pad, dp, w.kt, t_pad);
  if (want_ds) {
    io.v(p.v.data, first(p.v, 0), p.v.row_stride, t_len, d, w.dv, dp);
    for (std::int64_t x = all; x < padded; ++x) w.dv[x] = 0.0f;
    transpose_rows<O>(w.dv, dp, t_pad, dp, w.vt, t_pad);
  }
  for (std::int64_t x = 0; x < padded; ++x) w.dk[x] = w.dv[x] = 0.0f;
  if (next >= 0) prefetch_backward_head(p, next / p.heads, next % p.heads);
  for (std::int64_t i0 = 0; i0 < t_len; i0 += kVectorRowBlock) {
    const std::int64_t i1 = i0 + kVectorRowBlock < t_len ? i0 + kVectorRowBlock : t_len, rows = i1 - i0;
    score_rows<O>(w.qs + i0 * dp, dp, w.kt, t_pad, d, i0, rows, i1, w.p, t_pad);
    if (want_ds) {
      score_rows<O>(w.dout + i0 * dp, dp, w.vt, t_pad, d, i0, rows, i1, w.ds, t_pad);
      io.out(p.out.data, first(p.out, i0), p.out.row_stride, rows, d, w.rows, dp);
    }
    // P, Delta, dS: one stage for all rows before the next (the rows' latency chains overlap).
    float delta[kVectorRowBlock];
    if (want_ds)
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* dor = w.dout + (i0 + r) * dp;
        const float* outr = w.rows + r * dp;
        V dv = O::zero();
        for (std::int64_t c = 0; c < dp; c += L) dv = O::fmadd(O::load(dor + c), O::load(outr + c), dv);
        delta[r] = O::sum(dv);
      }
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = i0 + r, n = i + 1, full = (n - 1) / L * L;  // vectors [0, full) complete
      float* pr = w.p + r * t_pad;
      float* dsr = w.ds + r * t_pad;
      const V lse = O::set1(p.lse[(b * p.heads + h) * t_len + i]);
      for (std::int64_t j = 0; j < full; j += L) O::store(pr + j, O::exp(O::sub(O::load(pr + j), lse)));
      O::store(pr + full, O::head_or(O::exp(O::sub(O::load(pr + full), lse)), n - full, 0.0f));
      if (!want_ds) continue;
      const V dl = O::set1(delta[r]);
      for (std::int64_t j = 0; j < full; j += L)
        O::store(dsr + j, O::mul(O::load(pr + j), O::sub(O::load(dsr + j), dl)));
      O::store(dsr + full, O::head_or(O::mul(O::load(pr + full), O::sub(O::load(dsr + full), dl)), n - full, 0.0f));
    }
    if (want_dq) {
      causal_sum_rows<O>(w.ds, t_pad, w.k, dp, i0, rows, dp, w.rows, dp);
      io.dq(p.dq.data, first(p.dq, i0), p.dq.row_stride, rows, d, w.rows, dp, &p.scale, 0, p.accumulate);
    }
    if (want_dk) transposed_sum_rows<O>(w.ds, t_pad, w.q, dp, i0, i1, dp, w.dk, dp);
    if (want_dv) transposed_sum_rows<O>(w.p, t_pad, w.dout, dp, i0, i1, dp, w.dv, dp);
  }
  const float one = 1.0f;
  if (want_dk) io.dk(p.dk.data, first(p.dk, 0), p.dk.row_stride, t_len, d, w.dk, dp, &p.scale, 0, p.accumulate);
  if (want_dv) io.dv(p.dv.data, first(p.dv, 0), p.dv.row_stride, t_len, d, w.dv, dp, &one, 0, p.accumulate);
}

template <class O>
void vector_attention_backward(const ops::AttentionBackwardProblem& p) {
  const std::int64_t t_len = p.seq, d = p.head_dim, pairs = p.batch * p.heads;
  if (pairs == 0 || t_len == 0) return;
  const BackwardRowIo io{rows_loader<O>(p.q.dtype),   rows_loader<O>(p.k.dtype),    rows_loader<O>(p.v.dtype),
                         rows_loader<O>(p.out.dtype), rows_loader<O>(p.dout.dtype), rows_storer<O>(p.dq.dtype),
                         rows_storer<O>(p.dk.dtype),  rows_storer<O>(p.dv.dtype)};
  const double work =
      static_cast<double>(pairs) * static_cast<double>(t_len) * static_cast<double>(t_len) * static_cast<double>(d);
  int threads = work < static_cast<double>(kVectorBackwardParallelMinWork) ? 1 : ampkit::num_threads();
  if (threads > pairs) threads = static_cast<int>(pairs);
  const std::int64_t t_pad = round_up(t_len, 16), dp = round_up(d, 16);
  const std::int64_t per_thread = attention_pad(VectorBackwardSlices::floats(t_pad, dp));
  float* scratch = attention_scratch(per_thread, threads, "attention_backward");
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (std::int64_t pair = 0; pair < pairs; ++pair) {
    const VectorBackwardSlices w(scratch + omp_get_thread_num() * per_thread, t_pad, dp);
    vector_backward_head<O>(p, io, pair / p.heads, pair % p.heads, w, pair + 1 < pairs ? pair + 1 : -1);
  }
}

}  // namespace
}  // namespace ampkit::cpu
