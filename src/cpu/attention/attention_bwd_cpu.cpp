// Causal attention backward, fp32 CPU kernel (kernels layer). Per (batch b, head h), owned by one
// thread: q, k, dout widened to f32 as [T, d] blocks, k and v also transposed [d, T]; per block
// of kAttentionRowBlock query rows (scratch: the block's rows of P and dS), for each row i:
//   P[i, j] = exp((s q_i) . k_j - lse_i) (the forward's scores, bit for bit), j <= i
//   dP = dout_i . v_j;  Delta = dout_i . out_i (8-lane sum);  dS[i, j] = P[i, j] (dP - Delta)
//   dq_i = s sum_j dS[i, j] k_j (written now)
// then, for every key j, dK_j += dS[i, j] q_i and dV_j += P[i, j] dout_i over the block's rows in
// increasing i; at the end dk = s dK and dv = dV, each written once. Every sum has a fixed order
// and no (b, h) is shared between threads, so the bits never depend on the thread count.
#include <omp.h>

#include "ampkit/core/threading.hpp"
#include "cpu/attention/attention_kernels.hpp"
#include "cpu/attention/attention_rows.hpp"
#include "cpu/math/gelu_math.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kParallelMinWork = std::int64_t{1} << 15;

struct BackwardSlices {
  // [T, d]: q, k, dout, dk, dv; [d, T]: kt, vt; [R, T] (a block of query rows): p, ds;
  // rows: qs [d], dq [d], tmp [d]
  float *q, *k, *dout, *dk, *dv, *kt, *vt, *p, *ds, *qs, *dq, *tmp;
  std::int64_t used;  // floats of the slice
  static std::int64_t floats(std::int64_t t_len, std::int64_t d) { return BackwardSlices(nullptr, t_len, d).used; }
  BackwardSlices(float* base, std::int64_t t_len, std::int64_t d) {
    ScratchCarver c{base};
    q = c.take(t_len * d), k = c.take(t_len * d), dout = c.take(t_len * d), dk = c.take(t_len * d);
    dv = c.take(t_len * d), kt = c.take(t_len * d), vt = c.take(t_len * d);
    p = c.take(kAttentionRowBlock * t_len), ds = c.take(kAttentionRowBlock * t_len);
    qs = c.take(d), dq = c.take(d), tmp = c.take(d);
    used = c.used;
  }
};

void backward_head(const ops::AttentionBackwardProblem& p, std::int64_t b, std::int64_t h, const BackwardSlices& w) {
  const std::int64_t t_len = p.seq, d = p.head_dim, c0 = h * d;
  const bool want_dq = p.dq.data != nullptr, want_dk = p.dk.data != nullptr;
  const bool want_dv = p.dv.data != nullptr, want_ds = want_dq || want_dk;
  for (std::int64_t j = 0; j < t_len; ++j) {
    load_row_f32(p.q, row_offset(p.q, b, j) + c0, d, w.q + j * d);
    load_row_f32(p.k, row_offset(p.k, b, j) + c0, d, w.k + j * d);
    load_row_f32(p.dout, row_offset(p.dout, b, j) + c0, d, w.dout + j * d);
    for (std::int64_t c = 0; c < d; ++c) w.kt[c * t_len + j] = w.k[j * d + c];
    if (want_ds) {
      load_row_f32(p.v, row_offset(p.v, b, j) + c0, d, w.tmp);
      for (std::int64_t c = 0; c < d; ++c) w.vt[c * t_len + j] = w.tmp[c];
    }
  }
  for (std::int64_t x = 0; x < t_len * d; ++x) w.dk[x] = w.dv[x] = 0.0f;
  for (std::int64_t i0 = 0; i0 < t_len; i0 += kAttentionRowBlock) {
    const std::int64_t i1 = i0 + kAttentionRowBlock < t_len ? i0 + kAttentionRowBlock : t_len;
    for (std::int64_t i = i0; i < i1; ++i) {  // rows of P and dS; dq
      const std::int64_t n = i + 1;
      float* pi = w.p + (i - i0) * t_len;
      float* dsi = w.ds + (i - i0) * t_len;
      const float* qi = w.q + i * d;
      const float* doi = w.dout + i * d;
      for (std::int64_t c = 0; c < d; ++c) w.qs[c] = qi[c] * p.scale;
      dot_rows_transposed(w.qs, w.kt, t_len, d, n, pi);
      const float lse = p.lse[(b * p.heads + h) * t_len + i];
      for (std::int64_t j = 0; j < n; ++j) pi[j] = gemm_math::exp_f32(pi[j] - lse);
      if (!want_ds) continue;
      dot_rows_transposed(doi, w.vt, t_len, d, n, dsi);
      load_row_f32(p.out, row_offset(p.out, b, i) + c0, d, w.tmp);
      const float delta = lane_sum(d, [&](std::int64_t c) { return doi[c] * w.tmp[c]; });
      for (std::int64_t j = 0; j < n; ++j) dsi[j] = pi[j] * (dsi[j] - delta);
      if (want_dq) {
        for (std::int64_t c = 0; c < d; ++c) w.dq[c] = 0.0f;
        weighted_row_sum(dsi, 1, w.k, d, n, d, w.dq);
        store_row_f32(p.dq, row_offset(p.dq, b, i) + c0, d, w.dq, p.scale, p.accumulate);
      }
    }
    // dK_j += sum_i dS[i, j] q_i and dV_j += sum_i P[i, j] dout_i over the block's rows i >= j,
    // in increasing i: the same order as row by row, with dK_j, dV_j tiles in registers.
    for (std::int64_t j = 0; j < i1; ++j) {
      const std::int64_t ia = j > i0 ? j : i0, rows = i1 - ia;
      const std::int64_t first = (ia - i0) * t_len + j;
      if (want_dk) weighted_row_sum(w.ds + first, t_len, w.q + ia * d, d, rows, d, w.dk + j * d);
      if (want_dv) weighted_row_sum(w.p + first, t_len, w.dout + ia * d, d, rows, d, w.dv + j * d);
    }
  }
  for (std::int64_t j = 0; j < t_len; ++j) {
    if (want_dk) store_row_f32(p.dk, row_offset(p.dk, b, j) + c0, d, w.dk + j * d, p.scale, p.accumulate);
    if (want_dv) store_row_f32(p.dv, row_offset(p.dv, b, j) + c0, d, w.dv + j * d, 1.0f, p.accumulate);
  }
}

}  // namespace

void attention_backward_cpu(const ops::AttentionBackwardProblem& p) {
  const std::int64_t t_len = p.seq, d = p.head_dim, pairs = p.batch * p.heads;
  if (pairs == 0 || t_len == 0) return;
  const double work =
      static_cast<double>(pairs) * static_cast<double>(t_len) * static_cast<double>(t_len) * static_cast<double>(d);
  int threads = work < static_cast<double>(kParallelMinWork) ? 1 : ampkit::num_threads();
  if (threads > pairs) threads = static_cast<int>(pairs);
  const std::int64_t per_thread = attention_pad(BackwardSlices::floats(t_len, d));
  float* scratch = attention_scratch(per_thread, threads, "attention_backward");
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (std::int64_t pair = 0; pair < pairs; ++pair) {
    const BackwardSlices w(scratch + omp_get_thread_num() * per_thread, t_len, d);
    backward_head(p, pair / p.heads, pair % p.heads, w);
  }
}

}  // namespace ampkit::cpu
