// Row helpers of the fp32 attention kernels (kernels layer, internal): rows of one head widened
// to f32 and stored back (dtype chosen once per row), the two products (scores against a
// transposed key block, weighted sums of rows) in register tiles that keep the order of every
// sum, fixed-order 8-lane sums, and the per-thread scratch. Included by attention_fwd_cpu.cpp
// and attention_bwd_cpu.cpp; everything static inline.
#pragma once

#include <cstdint>

#include "core/element.hpp"
#include "cpu/attention/attention_kernels.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "ops/attention/attention_problem.hpp"

namespace ampkit::cpu {

/// Element offset of row (b, i) of an operand.
template <class Operand>
static inline std::int64_t row_offset(const Operand& x, std::int64_t b, std::int64_t i) {
  return b * x.batch_stride + i * x.row_stride;
}

/// dst[0, n) = elements [offset, offset + n) of x, widened to f32.
static inline void load_row_f32(const ops::AttentionInput& x, std::int64_t offset, std::int64_t n,
                                float* __restrict dst) {
  visit_dtype(x.dtype, [&]<DType T>() {
    for (std::int64_t c = 0; c < n; ++c) dst[c] = load_as<T>(x.data, offset + c);
  });
}

/// Elements [offset, offset + n) of y = scale * src (accumulating: old + scale * src), fp32 math,
/// rounded once to y's dtype.
static inline void store_row_f32(const ops::AttentionOutput& y, std::int64_t offset, std::int64_t n,
                                 const float* __restrict src, float scale, bool accumulate) {
  visit_dtype(y.dtype, [&]<DType T>() {
    for (std::int64_t c = 0; c < n; ++c) {
      float v = scale * src[c];
      if (accumulate) v = load_as<T>(y.data, offset + c) + v;
      store_as<T>(y.data, offset + c, v);
    }
  });
}

/// Columns per register tile of the two products below: 16 fp32 accumulators (four SSE vectors)
/// stay in registers across the whole reduction.
inline constexpr std::int64_t kAttentionTile = 16;

/// s[j] = sum_d a[d] * bt[d * ld + j] for j < n, the sum over d in index order starting from 0
/// (bt is a transposed [d_len, ld] block: the tile of j is contiguous). The bits do not depend on
/// the tiling.
static inline void dot_rows_transposed(const float* __restrict a, const float* __restrict bt, std::int64_t ld,
                                       std::int64_t d_len, std::int64_t n, float* __restrict s) {
  constexpr std::int64_t kT = kAttentionTile;
  std::int64_t j0 = 0;
  for (; j0 + kT <= n; j0 += kT) {
    float acc[kT] = {};
    for (std::int64_t d = 0; d < d_len; ++d) {
      const float ad = a[d];
      const float* __restrict row = bt + d * ld + j0;
      for (std::int64_t l = 0; l < kT; ++l) acc[l] += ad * row[l];
    }
    for (std::int64_t l = 0; l < kT; ++l) s[j0 + l] = acc[l];
  }
  if (j0 == n) return;
  const std::int64_t m = n - j0;
  float acc[kT] = {};
  for (std::int64_t d = 0; d < d_len; ++d) {
    const float ad = a[d];
    const float* __restrict row = bt + d * ld + j0;
    for (std::int64_t l = 0; l < m; ++l) acc[l] += ad * row[l];
  }
  for (std::int64_t l = 0; l < m; ++l) s[j0 + l] = acc[l];
}

/// y[c] += sum_r w[r * w_stride] * x[r * ld + c] for c < d_len, r < n: y's old value first, then
/// the terms in increasing r (a column tile of y held in registers over all r). The bits do not
/// depend on the tiling.
static inline void weighted_row_sum(const float* __restrict w, std::int64_t w_stride, const float* __restrict x,
                                    std::int64_t ld, std::int64_t n, std::int64_t d_len, float* __restrict y) {
  constexpr std::int64_t kT = kAttentionTile;
  std::int64_t c0 = 0;
  for (; c0 + kT <= d_len; c0 += kT) {
    float acc[kT];
    for (std::int64_t l = 0; l < kT; ++l) acc[l] = y[c0 + l];
    for (std::int64_t r = 0; r < n; ++r) {
      const float wr = w[r * w_stride];
      const float* __restrict row = x + r * ld + c0;
      for (std::int64_t l = 0; l < kT; ++l) acc[l] += wr * row[l];
    }
    for (std::int64_t l = 0; l < kT; ++l) y[c0 + l] = acc[l];
  }
  if (c0 == d_len) return;
  const std::int64_t m = d_len - c0;
  float acc[kT] = {};
  for (std::int64_t l = 0; l < m; ++l) acc[l] = y[c0 + l];
  for (std::int64_t r = 0; r < n; ++r) {
    const float wr = w[r * w_stride];
    const float* __restrict row = x + r * ld + c0;
    for (std::int64_t l = 0; l < m; ++l) acc[l] += wr * row[l];
  }
  for (std::int64_t l = 0; l < m; ++l) y[c0 + l] = acc[l];
}

/// sum_j term(j) for j < n as 8 lane partials (term j into lane j mod 8), then
/// ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)): a fixed order whatever the vector width.
template <class Term>
static inline float lane_sum(std::int64_t n, Term&& term) {
  float acc[8] = {};
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) acc[l] += term(j + l);
  for (int l = 0; j < n; ++j, ++l) acc[l] += term(j);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace ampkit::cpu
