// Causal attention forward, templated over the ISA's vector operations (kernels layer,
// internal). Included by attention_fwd_avx512.cpp (and the other ISA files), which export the
// entry points of attention_kernels.hpp. Per task (batch b, head h, block of up to
// kVectorRowBlock query rows [i0, i1)), in per-thread f32 scratch:
//   kt = k_j^T for j < i1 ([d, T], zero past i1), v = rows j < i1 ([T, dp]), qs = s q_i ([R, dp])
//   S[i, j] = sum_c qs_ic kt_cj, c in order (attention_tiles.hpp, score_rows), j <= i
//   m = max_j S;  P = exp_f32(S - m);  l = the lane sum of P (lane partials over the key vectors
//   in order, then Ops::sum's fixed tree);  out_i = (sum_j P_j v_j, j in order) * (1 / l)
//   lse_i = m + log(l)
// A row's arithmetic does not depend on the block or the thread, so neither do the bits.
#pragma once

#include <omp.h>

#include <cmath>
#include <cstdint>

#include "ampkit/core/threading.hpp"
#include "cpu/attention/attention_kernels.hpp"
#include "cpu/attention/attention_tiles.hpp"

namespace ampkit::cpu {
namespace {

// Below this many multiply-adds (batch * heads * seq^2 * head_dim) a call stays on the calling
// thread.
constexpr std::int64_t kVectorParallelMinWork = std::int64_t{1} << 16;

// Scratch of one thread. t_pad: seq rounded up to 16, dp: head_dim rounded up to 16.
struct VectorForwardSlices {
  float *kt, *v, *qs, *s, *o;  // [d, t_pad], [t_pad, dp], [B, dp], [B, t_pad], [B, dp]
  static std::int64_t floats(std::int64_t t_pad, std::int64_t d, std::int64_t dp) {
    constexpr std::int64_t B = kVectorRowBlock;
    return attention_pad(d * t_pad) + attention_pad(t_pad * dp) + 2 * attention_pad(B * dp) + attention_pad(B * t_pad);
  }
  VectorForwardSlices(float* base, std::int64_t t_pad, std::int64_t d, std::int64_t dp) {
    constexpr std::int64_t B = kVectorRowBlock;
    kt = base;
    v = kt + attention_pad(d * t_pad);
    qs = v + attention_pad(t_pad * dp);
    s = qs + attention_pad(B * dp);
    o = s + attention_pad(B * t_pad);
  }
};

struct ForwardRowIo {
  AttentionLoadRow q, k, v;
  AttentionStoreRow out;
};

template <class O>
void vector_forward_block(const ops::AttentionForwardProblem& p, const ForwardRowIo& io, std::int64_t b, std::int64_t h,
                          std::int64_t i0, std::int64_t i1, const VectorForwardSlices& w) {
  using V = typename O::V;
  constexpr std::int64_t L = O::kLanes;
  const std::int64_t d = p.head_dim, c0 = h * d, dp = round_up(d, 16), t_pad = round_up(p.seq, 16);
  const std::int64_t rows = i1 - i0, key_cols = round_up(i1, 16);
  // kt: [d, t_pad] (columns i1 .. key_cols zero), v: [i1, dp]; o's first row as a bounce row.
  for (std::int64_t j = 0; j < i1; ++j) {
    io.k(p.k.data, b * p.k.batch_stride + j * p.k.row_stride + c0, d, w.o);
    for (std::int64_t c = 0; c < d; ++c) w.kt[c * t_pad + j] = w.o[c];
    io.v(p.v.data, b * p.v.batch_stride + j * p.v.row_stride + c0, d, w.v + j * dp);
  }
  for (std::int64_t c = 0; c < d; ++c)
    for (std::int64_t j = i1; j < key_cols; ++j) w.kt[c * t_pad + j] = 0.0f;
  // qs: rows i0 .. i1 - 1 scaled, rows up to the score tile zero.
  const std::int64_t rows_pad = round_up(rows, O::kScoreRows);
  for (std::int64_t r = 0; r < rows_pad; ++r) {
    float* qr = w.qs + r * dp;
    if (r < rows) {
      io.q(p.q.data, b * p.q.batch_stride + (i0 + r) * p.q.row_stride + c0, d, qr);
      for (std::int64_t c = 0; c < d; ++c) qr[c] *= p.scale;
    } else {
      for (std::int64_t c = 0; c < dp; ++c) qr[c] = 0.0f;
    }
  }
  score_rows<O>(w.qs, dp, w.kt, t_pad, d, i0, rows, i1, w.s, t_pad);
  float inv_l[kVectorRowBlock];
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t n = i0 + r + 1, full = (n - 1) / L * L;  // vectors [0, full) complete
    float* sr = w.s + r * t_pad;
    V mv = O::head_or(O::load(sr + full), n - full, -INFINITY);
    for (std::int64_t j = 0; j < full; j += L) mv = O::max(mv, O::load(sr + j));
    const float m = O::max_lane(mv);
    const V mb = O::set1(m);
    V lv = O::zero();
    for (std::int64_t j = 0; j < full; j += L) {
      const V e = O::exp(O::sub(O::load(sr + j), mb));
      O::store(sr + j, e);
      lv = O::add(lv, e);
    }
    const V e = O::head_or(O::exp(O::sub(O::load(sr + full), mb)), n - full, 0.0f);
    O::store(sr + full, e);
    lv = O::add(lv, e);
    const float l = O::sum(lv);
    inv_l[r] = 1.0f / l;
    p.lse[(b * p.heads + h) * p.seq + i0 + r] = m + std::log(l);
  }
  causal_sum_rows<O>(w.s, t_pad, w.v, dp, i0, rows, dp, w.o, dp);
  for (std::int64_t r = 0; r < rows; ++r)
    io.out(p.out.data, b * p.out.batch_stride + (i0 + r) * p.out.row_stride + c0, d, w.o + r * dp, inv_l[r], false);
}

template <class O>
void vector_attention_forward(const ops::AttentionForwardProblem& p) {
  const std::int64_t t_len = p.seq, d = p.head_dim, pairs = p.batch * p.heads;
  const std::int64_t blocks = (t_len + kVectorRowBlock - 1) / kVectorRowBlock, tasks = pairs * blocks;
  if (tasks == 0) return;
  const ForwardRowIo io{row_loader<O>(p.q.dtype), row_loader<O>(p.k.dtype), row_loader<O>(p.v.dtype),
                        row_storer<O>(p.out.dtype)};
  const double work =
      static_cast<double>(pairs) * static_cast<double>(t_len) * static_cast<double>(t_len) * static_cast<double>(d);
  int threads = work < static_cast<double>(kVectorParallelMinWork) ? 1 : ampkit::num_threads();
  if (threads > tasks) threads = static_cast<int>(tasks);
  const std::int64_t t_pad = round_up(t_len, 16), dp = round_up(d, 16);
  const std::int64_t per_thread = attention_pad(VectorForwardSlices::floats(t_pad, d, dp));
  float* scratch = attention_scratch(per_thread, threads, "attention_forward");
  // Tasks by decreasing cost (last row blocks first), handed out one at a time.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (std::int64_t task = 0; task < tasks; ++task) {
    const VectorForwardSlices w(scratch + omp_get_thread_num() * per_thread, t_pad, d, dp);
    const std::int64_t block = blocks - 1 - task / pairs, pair = task % pairs;
    const std::int64_t i0 = block * kVectorRowBlock;
    const std::int64_t i1 = i0 + kVectorRowBlock < t_len ? i0 + kVectorRowBlock : t_len;
    vector_forward_block<O>(p, io, pair / p.heads, pair % p.heads, i0, i1, w);
  }
}

}  // namespace
}  // namespace ampkit::cpu
