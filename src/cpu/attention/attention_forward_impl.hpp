// Causal attention forward, templated over the ISA's vector operations (kernels layer,
// internal). Included by attention_fwd_avx512.cpp (and the other ISA files), which export the
// entry points of attention_kernels.hpp. Per task (batch b, head h, block of up to
// kVectorRowBlock query rows [i0, i1)), in per-thread f32 scratch:
//   k, v = rows j < i1 ([T, dp]), kt = k^T ([dp, T], 16 x 16 blocks), qs = s q_i ([B, dp])
//   S[i, j] = sum_c qs_ic kt_cj, c in order (attention_tiles.hpp, score_rows), j <= i
//   m = max_j S;  P = Ops::exp(S - m);  l = the lane sum of P (lane partials over the key vectors
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
  // [t_pad, dp]: k, v; [dp, t_pad]: kt; [B, dp]: qs, o; [B, t_pad]: s
  float *k, *v, *kt, *qs, *o, *s;
  std::int64_t used;  // floats of the slice
  static std::int64_t floats(std::int64_t t_pad, std::int64_t dp) {
    return VectorForwardSlices(nullptr, t_pad, dp).used;
  }
  VectorForwardSlices(float* base, std::int64_t t_pad, std::int64_t dp) {
    constexpr std::int64_t B = kVectorRowBlock;
    ScratchCarver c{base};
    k = c.take(t_pad * dp), v = c.take(t_pad * dp), kt = c.take(t_pad * dp);
    qs = c.take(B * dp), o = c.take(B * dp), s = c.take(B * t_pad);
    used = c.used;
  }
};

struct ForwardRowIo {
  AttentionLoadRows q, k, v;
  AttentionStoreRows out;
};

// One forward task: rows [i0, i1) of head h of batch b.
struct ForwardTask {
  std::int64_t b, h, i0, i1;
};

// Hints the operand rows a task reads and writes into the cache (issued for the next task while
// this one computes).
inline void prefetch_forward_task(const ops::AttentionForwardProblem& p, const ForwardTask& t) {
  const std::int64_t c0 = t.h * p.head_dim, rows = t.i1 - t.i0;
  auto first = [&](const auto& x, std::int64_t i) { return t.b * x.batch_stride + i * x.row_stride + c0; };
  prefetch_rows(p.k.data, p.k.dtype, first(p.k, 0), p.k.row_stride, t.i1, p.head_dim, false);
  prefetch_rows(p.v.data, p.v.dtype, first(p.v, 0), p.v.row_stride, t.i1, p.head_dim, false);
  prefetch_rows(p.q.data, p.q.dtype, first(p.q, t.i0), p.q.row_stride, rows, p.head_dim, false);
  prefetch_rows(p.out.data, p.out.dtype, first(p.out, t.i0), p.out.row_stride, rows, p.head_dim, true);
}

template <class O>
void vector_forward_block(const ops::AttentionForwardProblem& p, const ForwardRowIo& io, std::int64_t b, std::int64_t h,
                          std::int64_t i0, std::int64_t i1, const VectorForwardSlices& w, const ForwardTask* next) {
  using V = typename O::V;
  constexpr std::int64_t L = O::kLanes;
  const std::int64_t d = p.head_dim, c0 = h * d, dp = round_up(d, 16), t_pad = round_up(p.seq, 16);
  const std::int64_t rows = i1 - i0, key_rows = round_up(i1, L);
  // k: rows j < i1 (zero up to key_rows), kt: its transpose [dp, t_pad]; v: rows j < i1.
  io.k(p.k.data, b * p.k.batch_stride + c0, p.k.row_stride, i1, d, w.k, dp);
  for (std::int64_t x = i1 * dp; x < key_rows * dp; ++x) w.k[x] = 0.0f;
  transpose_rows<O>(w.k, dp, key_rows, dp, w.kt, t_pad);
  io.v(p.v.data, b * p.v.batch_stride + c0, p.v.row_stride, i1, d, w.v, dp);
  // qs: rows i0 .. i1 - 1 scaled, rows up to the score tile zero.
  const std::int64_t rows_pad = round_up(rows, O::kScoreRows);
  io.q(p.q.data, b * p.q.batch_stride + i0 * p.q.row_stride + c0, p.q.row_stride, rows, d, w.qs, dp);
  const V scale = O::set1(p.scale);
  for (std::int64_t x = 0; x < rows * dp; x += L) O::store(w.qs + x, O::mul(O::load(w.qs + x), scale));
  for (std::int64_t x = rows * dp; x < rows_pad * dp; ++x) w.qs[x] = 0.0f;
  if (next != nullptr) prefetch_forward_task(p, *next);
  score_rows<O>(w.qs, dp, w.kt, t_pad, d, i0, rows, i1, w.s, t_pad);
  // Softmax, one stage for all rows before the next, so the short rows' latency chains (the
  // horizontal max and sum, the division, the log) overlap; each row's arithmetic is the same.
  float m[kVectorRowBlock], l[kVectorRowBlock], inv_l[kVectorRowBlock];
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t n = i0 + r + 1, full = (n - 1) / L * L;  // vectors [0, full) complete
    const float* sr = w.s + r * t_pad;
    V mv = O::head_or(O::load(sr + full), n - full, -INFINITY);
    for (std::int64_t j = 0; j < full; j += L) mv = O::max(mv, O::load(sr + j));
    m[r] = O::max_lane(mv);
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t n = i0 + r + 1, full = (n - 1) / L * L;
    float* sr = w.s + r * t_pad;
    const V mb = O::set1(m[r]);
    V lv = O::zero();
    for (std::int64_t j = 0; j < full; j += L) {
      const V e = O::exp(O::sub(O::load(sr + j), mb));
      O::store(sr + j, e);
      lv = O::add(lv, e);
    }
    const V e = O::head_or(O::exp(O::sub(O::load(sr + full), mb)), n - full, 0.0f);
    O::store(sr + full, e);
    l[r] = O::sum(O::add(lv, e));
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    inv_l[r] = 1.0f / l[r];
    p.lse[(b * p.heads + h) * p.seq + i0 + r] = m[r] + std::log(l[r]);
  }
  causal_sum_rows<O>(w.s, t_pad, w.v, dp, i0, rows, dp, w.o, dp);
  io.out(p.out.data, b * p.out.batch_stride + i0 * p.out.row_stride + c0, p.out.row_stride, rows, d, w.o, dp, inv_l, 1,
         false);
}

template <class O>
void vector_attention_forward(const ops::AttentionForwardProblem& p) {
  const std::int64_t t_len = p.seq, d = p.head_dim, pairs = p.batch * p.heads;
  const std::int64_t blocks = (t_len + kVectorRowBlock - 1) / kVectorRowBlock, tasks = pairs * blocks;
  if (tasks == 0) return;
  const ForwardRowIo io{rows_loader<O>(p.q.dtype), rows_loader<O>(p.k.dtype), rows_loader<O>(p.v.dtype),
                        rows_storer<O>(p.out.dtype)};
  const double work =
      static_cast<double>(pairs) * static_cast<double>(t_len) * static_cast<double>(t_len) * static_cast<double>(d);
  int threads = work < static_cast<double>(kVectorParallelMinWork) ? 1 : ampkit::num_threads();
  if (threads > tasks) threads = static_cast<int>(tasks);
  const std::int64_t t_pad = round_up(t_len, 16), dp = round_up(d, 16);
  const std::int64_t per_thread = attention_pad(VectorForwardSlices::floats(t_pad, dp));
  float* scratch = attention_scratch(per_thread, threads, "attention_forward");
  // Tasks by decreasing cost (last row blocks first), handed out one at a time.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (std::int64_t task = 0; task < tasks; ++task) {
    const VectorForwardSlices w(scratch + omp_get_thread_num() * per_thread, t_pad, dp);
    auto task_at = [&](std::int64_t x) {
      const std::int64_t block = blocks - 1 - x / pairs, pair = x % pairs;
      const std::int64_t i0 = block * kVectorRowBlock;
      return ForwardTask{pair / p.heads, pair % p.heads, i0,
                         i0 + kVectorRowBlock < t_len ? i0 + kVectorRowBlock : t_len};
    };
    const ForwardTask t = task_at(task), next = task_at(task + 1 < tasks ? task + 1 : task);
    vector_forward_block<O>(p, io, t.b, t.h, t.i0, t.i1, w, task + 1 < tasks ? &next : nullptr);
  }
}

}  // namespace
}  // namespace ampkit::cpu
