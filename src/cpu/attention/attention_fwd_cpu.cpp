// Causal attention forward, fp32 CPU kernel (kernels layer). Per task (batch b, head h, block of
// query rows [i0, i1)): keys 0..i1-1 widened to f32 as a transposed [head_dim, i1] block, values
// as [i1, head_dim]; per query row i (scratch: one row of scores):
//   S[j] = (s q_i) . k_j, j <= i  (sum over head_dim in index order, a tile of j in registers)
//   m = max_j S[j];  P[j] = exp(S[j] - m);  l = 8-lane sum of P;  out_i = (sum_j P[j] v_j) / l
//   lse_i = m + log(l)
// A row's arithmetic does not depend on the blocking, so the bits never depend on the thread
// count. Called through the list of attention_kernel_list.cpp by the front end.
#include <omp.h>
#include <cmath>

#include "ampkit/core/threading.hpp"
#include "cpu/attention/attention_kernels.hpp"
#include "cpu/attention/attention_rows.hpp"
#include "cpu/math/gelu_math.hpp"

namespace ampkit::cpu {
namespace {

// Below this many multiply-adds (batch * heads * seq^2 * head_dim) a call stays on the calling
// thread: an OpenMP region costs microseconds.
constexpr std::int64_t kParallelMinWork = std::int64_t{1} << 16;

struct ForwardSlices {
  float *kt, *v, *q, *o, *s;  // [d, T], [T, d], [d], [d], [T]
  std::int64_t used;          // floats of the slice
  static std::int64_t floats(std::int64_t t_len, std::int64_t d) { return ForwardSlices(nullptr, t_len, d).used; }
  ForwardSlices(float* base, std::int64_t t_len, std::int64_t d) {
    ScratchCarver c{base};
    kt = c.take(t_len * d), v = c.take(t_len * d), q = c.take(d), o = c.take(d), s = c.take(t_len);
    used = c.used;
  }
};

// Query rows [i0, i1) of head h of batch b.
void forward_block(const ops::AttentionForwardProblem& p, std::int64_t b, std::int64_t h, std::int64_t i0,
                   std::int64_t i1, const ForwardSlices& w) {
  const std::int64_t d = p.head_dim, c0 = h * d;
  for (std::int64_t j = 0; j < i1; ++j) {  // kt: [d, i1], v: [i1, d]
    load_row_f32(p.k, row_offset(p.k, b, j) + c0, d, w.o);
    for (std::int64_t c = 0; c < d; ++c) w.kt[c * i1 + j] = w.o[c];
    load_row_f32(p.v, row_offset(p.v, b, j) + c0, d, w.v + j * d);
  }
  for (std::int64_t i = i0; i < i1; ++i) {
    const std::int64_t n = i + 1;
    load_row_f32(p.q, row_offset(p.q, b, i) + c0, d, w.q);
    for (std::int64_t c = 0; c < d; ++c) w.q[c] *= p.scale;
    dot_rows_transposed(w.q, w.kt, i1, d, n, w.s);
    float m = w.s[0];
    for (std::int64_t j = 1; j < n; ++j) m = w.s[j] > m ? w.s[j] : m;
    for (std::int64_t j = 0; j < n; ++j) w.s[j] = gemm_math::exp_f32(w.s[j] - m);
    const float l = lane_sum(n, [&](std::int64_t j) { return w.s[j]; });
    for (std::int64_t c = 0; c < d; ++c) w.o[c] = 0.0f;
    weighted_row_sum(w.s, 1, w.v, d, n, d, w.o);
    store_row_f32(p.out, row_offset(p.out, b, i) + c0, d, w.o, 1.0f / l, false);
    p.lse[(b * p.heads + h) * p.seq + i] = m + std::log(l);
  }
}

}  // namespace

void attention_forward_cpu(const ops::AttentionForwardProblem& p) {
  const std::int64_t t_len = p.seq, d = p.head_dim, pairs = p.batch * p.heads;
  const std::int64_t blocks = (t_len + kAttentionRowBlock - 1) / kAttentionRowBlock;
  const std::int64_t tasks = pairs * blocks;
  if (tasks == 0) return;
  const double work =
      static_cast<double>(pairs) * static_cast<double>(t_len) * static_cast<double>(t_len) * static_cast<double>(d);
  int threads = work < static_cast<double>(kParallelMinWork) ? 1 : ampkit::num_threads();
  if (threads > tasks) threads = static_cast<int>(tasks);
  const std::int64_t per_thread = attention_pad(ForwardSlices::floats(t_len, d));
  float* scratch = attention_scratch(per_thread, threads, "attention_forward");
  // Tasks by decreasing cost (last row blocks first), handed out one at a time.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
  for (std::int64_t task = 0; task < tasks; ++task) {
    const ForwardSlices w(scratch + omp_get_thread_num() * per_thread, t_len, d);
    const std::int64_t block = blocks - 1 - task / pairs, pair = task % pairs;
    const std::int64_t i0 = block * kAttentionRowBlock;
    const std::int64_t i1 = i0 + kAttentionRowBlock < t_len ? i0 + kAttentionRowBlock : t_len;
    forward_block(p, pair / p.heads, pair % p.heads, i0, i1, w);
  }
}

}  // namespace ampkit::cpu
