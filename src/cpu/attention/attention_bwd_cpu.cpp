// Causal attention backward, fp32 CPU kernel (kernels layer). Per (batch b, head h), owned by one
// thread: q, k, dout widened to f32 as [T, d] blocks, k and v also transposed [d, T]; per query
// row i, in increasing i (scratch: rows of scores):
//   P[j] = exp((s q_i) . k_j - lse_i) (the forward's scores, bit for bit), j <= i
//   dP[j] = dout_i . v_j;  Delta = dout_i . out_i (8-lane sum);  dS[j] = P[j] (dP[j] - Delta)
//   dq_i = s sum_j dS[j] k_j (written now);  dK_j += dS[j] q_i;  dV_j += P[j] dout_i
// then dk = s dK and dv = dV, each written once. Every sum has a fixed order and no (b, h) is
// shared between threads, so the bits never depend on the thread count.
#include <omp.h>

#include "ampkit/core/threading.hpp"
#include "cpu/attention/attention_kernels.hpp"
#include "cpu/attention/attention_rows.hpp"
#include "cpu/math/gelu_math.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kParallelMinWork = std::int64_t{1} << 15;

struct BackwardSlices {
  // [T, d]: q, k, dout, dk, dv; [d, T]: kt, vt; rows: qs [d], dq [d], tmp [d], p [T], ds [T]
  float *q, *k, *dout, *dk, *dv, *kt, *vt, *qs, *dq, *tmp, *p, *ds;
  static std::int64_t floats(std::int64_t t_len, std::int64_t d) {
    return 7 * attention_pad(t_len * d) + 3 * attention_pad(d) + 2 * attention_pad(t_len);
  }
  BackwardSlices(float* base, std::int64_t t_len, std::int64_t d) {
    float* next = base;
    auto take = [&](std::int64_t n) {
      float* x = next;
      next += attention_pad(n);
      return x;
    };
    q = take(t_len * d), k = take(t_len * d), dout = take(t_len * d), dk = take(t_len * d);
    dv = take(t_len * d), kt = take(t_len * d), vt = take(t_len * d);
    qs = take(d), dq = take(d), tmp = take(d), p = take(t_len), ds = take(t_len);
  }
};

void backward_head(const ops::AttentionBackwardProblem& p, std::int64_t b, std::int64_t h,
                   const BackwardSlices& w) {
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
  for (std::int64_t i = 0; i < t_len; ++i) {
    const std::int64_t n = i + 1;
    const float* qi = w.q + i * d;
    const float* doi = w.dout + i * d;
    for (std::int64_t c = 0; c < d; ++c) w.qs[c] = qi[c] * p.scale;
    dot_rows_transposed(w.qs, w.kt, t_len, d, n, w.p);
    const float lse = p.lse[(b * p.heads + h) * t_len + i];
    for (std::int64_t j = 0; j < n; ++j) w.p[j] = gemm_math::exp_f32(w.p[j] - lse);
    if (want_ds) {
      dot_rows_transposed(doi, w.vt, t_len, d, n, w.ds);
      load_row_f32(p.out, row_offset(p.out, b, i) + c0, d, w.tmp);
      const float delta = lane_sum(d, [&](std::int64_t c) { return doi[c] * w.tmp[c]; });
      for (std::int64_t j = 0; j < n; ++j) w.ds[j] = w.p[j] * (w.ds[j] - delta);
      if (want_dq) {
        for (std::int64_t c = 0; c < d; ++c) w.dq[c] = 0.0f;
        for (std::int64_t j = 0; j < n; ++j) axpy(w.ds[j], w.k + j * d, d, w.dq);
        store_row_f32(p.dq, row_offset(p.dq, b, i) + c0, d, w.dq, p.scale, p.accumulate);
      }
      if (want_dk)
        for (std::int64_t j = 0; j < n; ++j) axpy(w.ds[j], qi, d, w.dk + j * d);
    }
    if (want_dv)
      for (std::int64_t j = 0; j < n; ++j) axpy(w.p[j], doi, d, w.dv + j * d);
  }
  for (std::int64_t j = 0; j < t_len; ++j) {
    if (want_dk)
      store_row_f32(p.dk, row_offset(p.dk, b, j) + c0, d, w.dk + j * d, p.scale, p.accumulate);
    if (want_dv)
      store_row_f32(p.dv, row_offset(p.dv, b, j) + c0, d, w.dv + j * d, 1.0f, p.accumulate);
  }
}

}  // namespace

void attention_backward_cpu(const ops::AttentionBackwardProblem& p) {
  const std::int64_t t_len = p.seq, d = p.head_dim, pairs = p.batch * p.heads;
  if (pairs == 0 || t_len == 0) return;
  const double work = static_cast<double>(pairs) * static_cast<double>(t_len) *
                      static_cast<double>(t_len) * static_cast<double>(d);
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
