// LayerNorm/RMSNorm forward, templated over the ISA's vector operations (kernels layer,
// internal). Included by norm_fwd_avx512.cpp and norm_fwd_avx2.cpp, which export the entry
// points of norm_kernels.hpp. Math and rounding: docs/NUMERICS.md "LayerNorm and RMSNorm".
#pragma once

#include <cstdint>

#include "ampkit/core/threading.hpp"
#include "core/element.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/norm/norm_rows.hpp"

namespace ampkit::cpu {
namespace {

// Prefetches the next row (`next`, or null) under element i of this one, once per vector.
// Issued by the output pass (and by LayerNorm's one-pass statistics): with the statistics pass
// only, RMSNorm bf16 8192x4096 went 1.5x slower; with one prefetch per 64-byte line instead of
// one per vector (bf16: two per line), 10-20% slower from DRAM (norm_bench, 5 alternations).
template <class O, DType T>
[[gnu::always_inline]] inline void prefetch_next(const void* next, std::int64_t i) {
  if (next) O::prefetch(next, i * static_cast<std::int64_t>(dtype_size(T)));
}

// Per-row statistics: LayerNorm uses m1, c and r; RMSNorm only r.
struct RowStats {
  float m1 = 0.0f, c = 0.0f, r = 0.0f;
};

// One pass of shifted sums over a row of n >= 2 * O::kLanes elements of dtype T from `x`:
// d = x - shift, *sum_d = sum(d), *sum_dd = sum(d*d) (two accumulator chains, fixed order). With
// kStoreWide the widened row is also stored to `wide` ([n] f32); `next` (a row of dtype XN, or
// null) is prefetched.
template <class O, DType T, DType XN, bool kStoreWide>
[[gnu::always_inline]] inline void shifted_sums(const void* x, float* wide, std::int64_t n, float shift,
                                                const void* next, float* sum_d, float* sum_dd) {
  using V = typename O::V;
  const V kv = O::set1(shift);
  V s1[2] = {O::zero(), O::zero()}, s2[2] = {O::zero(), O::zero()};
  for_row<O>(
      n, [&](int s, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
        prefetch_next<O, XN>(next, i);
        const V v = O::template load<T>(x, i, k);
        if constexpr (kStoreWide) O::template store<DType::f32>(wide, i, v, k);
        V d = O::sub(v, kv);
        if (k < O::kLanes) d = O::head(d, k);  // lanes past the tail add nothing
        s1[s] = O::add(s1[s], d);
        s2[s] = O::fmadd(d, d, s2[s]);
      });
  *sum_d = O::sum(O::add(s1[0], s1[1]));
  *sum_dd = O::sum(O::add(s2[0], s2[1]));
}

// LayerNorm statistics of one long row (n >= 2 * O::kLanes) in one pass over x, shifted sums:
//   K = fp32 mean of the first 2*kLanes elements; d = x - K; c = sum(d)/n;
//   var = (sum(d*d) - sum(d)*c)/n; mean = K + c.
// This is the corrected two-pass formula with K in place of the first pass's mean; its error
// grows with (mean - K)^2 / var, so a row whose shift turned out poor (c*c > var/4) is summed
// again from cache with the shift K + c (docs/NUMERICS.md derives the bound of both cases).
// With kWide the pass also stores the widened row to `wide` ([n] f32) for the output pass.
template <class O, DType X>
[[gnu::always_inline]] inline void row_stats_one_pass(const void* x, float* wide, std::int64_t n, float inv_n,
                                                      float eps, RowStats* st, const void* next) {
  constexpr bool kWide = X != DType::f32;
  constexpr std::int64_t kL = O::kLanes;
  float shift = O::sum(O::add(O::template load<X>(x, 0, kL), O::template load<X>(x, kL, kL))) *
                (1.0f / static_cast<float>(2 * kL));
  float sum_d = 0.0f, sum_dd = 0.0f;
  shifted_sums<O, X, X, kWide>(x, wide, n, shift, next, &sum_d, &sum_dd);
  float c = sum_d * inv_n;
  float var = (sum_dd - sum_d * c) * inv_n;
  if (c * c > 0.25f * var) {  // a poor shift (or var < 0 from rounding); NaN rows go on as NaN
    shift += c;
    if constexpr (kWide) {
      shifted_sums<O, DType::f32, X, false>(wide, nullptr, n, shift, nullptr, &sum_d, &sum_dd);
    } else {
      shifted_sums<O, X, X, false>(x, nullptr, n, shift, nullptr, &sum_d, &sum_dd);
    }
    c = sum_d * inv_n;
    var = (sum_dd - sum_d * c) * inv_n;
  }
  if (var < 0.0f) var = 0.0f;  // rounding only; NaN stays NaN
  st->m1 = shift;
  st->c = c;
  st->r = 1.0f / O::sqrt(var + eps);
}

// kR rows at a time, x: [kR, n] of dtype X (rows q at row_ptr(x, q, n)). Each stage runs for all
// kR rows before the next, so the latency chains of short rows (horizontal sums, division,
// square root) overlap; each row's arithmetic is the same for any kR.
// LayerNorm, corrected two-pass in fp32:
//   m1 = sum(x)/n; d = x - m1; sd = sum(d); sdd = sum(d*d); c = sd/n;
//   var = (sdd - sd*c)/n; rstd = 1/sqrt(var + eps); mean = m1 + c
// RMSNorm: rstd = 1/sqrt(sum(x*x)/n + eps). ("/n" is a multiplication by the fp32 1/n.)
// With kWide (x narrower than f32) the first pass also stores the widened rows to `wide`
// ([kR, n] f32, per-thread scratch in L1/L2) and later passes read those: the same values,
// widened once.
template <class O, DType X, bool kRms, int kR>
[[gnu::always_inline]] inline void row_stats(const void* x, float* wide, std::int64_t n, float inv_n, float eps,
                                             RowStats* st) {
  using V = typename O::V;
  constexpr bool kWide = X != DType::f32;
  constexpr DType XR = kWide ? DType::f32 : X;
  V acc[kR][2];
#pragma GCC unroll 8
  for (int q = 0; q < kR; ++q) {
    const void* xq = row_ptr<X>(x, q, n);
    float* wq = kWide ? wide + q * n : nullptr;
    acc[q][0] = acc[q][1] = O::zero();
    for_row<O>(
        n, [&](int s, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
          const V v = O::template load<X>(xq, i, k);
          if constexpr (kWide) O::template store<DType::f32>(wq, i, v, k);
          acc[q][s] = kRms ? O::fmadd(v, v, acc[q][s]) : O::add(acc[q][s], v);
        });
  }
  if constexpr (kRms) {
#pragma GCC unroll 8
    for (int q = 0; q < kR; ++q) st[q].r = 1.0f / O::sqrt(O::sum(O::add(acc[q][0], acc[q][1])) * inv_n + eps);
  } else {
    V sd[kR][2], sdd[kR][2];
#pragma GCC unroll 8
    for (int q = 0; q < kR; ++q) {
      const void* xq = kWide ? static_cast<const void*>(wide + q * n) : row_ptr<X>(x, q, n);
      st[q].m1 = O::sum(O::add(acc[q][0], acc[q][1])) * inv_n;
      const V m1v = O::set1(st[q].m1);
      sd[q][0] = sd[q][1] = sdd[q][0] = sdd[q][1] = O::zero();
      for_row<O>(
          n, [&](int s, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
            // Lanes past the tail read 0; zero their deviation so they add nothing.
            V d = O::sub(O::template load<XR>(xq, i, k), m1v);
            if (k < O::kLanes) d = O::head(d, k);
            sd[q][s] = O::add(sd[q][s], d);
            sdd[q][s] = O::fmadd(d, d, sdd[q][s]);
          });
    }
#pragma GCC unroll 8
    for (int q = 0; q < kR; ++q) {
      const float sum_d = O::sum(O::add(sd[q][0], sd[q][1]));
      const float sum_dd = O::sum(O::add(sdd[q][0], sdd[q][1]));
      st[q].c = sum_d * inv_n;
      float var = (sum_dd - sum_d * st[q].c) * inv_n;
      if (var < 0.0f) var = 0.0f;  // rounding only; NaN stays NaN
      st[q].r = 1.0f / O::sqrt(var + eps);
    }
  }
}

// One row: y = ((x - m1) - c) * rstd * gamma + beta, computed as
// fma(x - m1, rstd, -(c*rstd)) * gamma + beta (RMSNorm: x * rstd * gamma).
// x: [n] of dtype XR (x itself, or its widened copy); y: [n] of dtype X; gamma, beta: [n] of
// dtype P (used when kGamma / kBeta).
// With kStream, whole vectors of y go out with non-temporal stores (y must then be aligned to
// the vector's bytes at every row start; forward_rows checks). A template parameter, not a
// flag, so the loop has no branch for it. Whole vectors go out in pairs (O::store2), so a bf16
// pair is rounded by one instruction where the ISA has one; y is element-wise, so the grouping
// changes no bit.
template <class O, DType X, DType XR, DType P, bool kRms, bool kGamma, bool kBeta, bool kStream>
[[gnu::always_inline]] inline void normalize_row(const void* x, void* y, const void* gamma, const void* beta,
                                                 std::int64_t n, const RowStats& st, const void* next) {
  using V = typename O::V;
  constexpr std::int64_t kL = O::kLanes;
  const V rv = O::set1(st.r), m1v = O::set1(st.m1), ncr = O::set1(-(st.c * st.r));
  auto value = [&](std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
    V v = O::template load<XR>(x, i, k);
    v = kRms ? O::mul(v, rv) : O::fmadd(O::sub(v, m1v), rv, ncr);
    if constexpr (kGamma && kBeta) {
      v = O::fmadd(v, O::template load<P>(gamma, i, k), O::template load<P>(beta, i, k));
    } else if constexpr (kGamma) {
      v = O::mul(v, O::template load<P>(gamma, i, k));
    } else if constexpr (kBeta) {
      v = O::add(v, O::template load<P>(beta, i, k));
    }
    return v;
  };
  std::int64_t i = 0;
  for (; i + 2 * kL <= n; i += 2 * kL) {
    prefetch_next<O, X>(next, i);
    prefetch_next<O, X>(next, i + kL);
    const V v0 = value(i, kL), v1 = value(i + kL, kL);
    if constexpr (kStream) {
      O::template stream2<X>(y, i, v0, v1);
    } else {
      O::template store2<X>(y, i, v0, v1);
    }
  }
  if (i + kL <= n) {
    prefetch_next<O, X>(next, i);
    const V v = value(i, kL);
    if constexpr (kStream) {
      O::template stream<X>(y, i, v);
    } else {
      O::template store<X>(y, i, v, kL);
    }
    i += kL;
  }
  if (i < n) O::template store<X>(y, i, value(i, n - i), n - i);
}

// kR rows starting at row r0: statistics, then y, mean and rstd. After the first pass a row is
// in L1/L2, so memory sees one read of x and one write of y. Long LayerNorm rows take their
// statistics in one pass (row_stats_one_pass), so such a row is read twice in all, not three times.
// wide: [kR, n] f32 scratch (used when x is narrower than f32).
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta, int kR>
[[gnu::always_inline]] inline void forward_row_group(const ops::NormForwardProblem& p, std::int64_t r0, float inv_n,
                                                     float* wide, bool stream) {
  constexpr bool kWide = X != DType::f32;
  constexpr DType XR = kWide ? DType::f32 : X;
  const std::int64_t n = p.n;
  RowStats st[kR];
  // Long rows (kR = 1) prefetch the next row while working on this one from cache.
  const void* next = kR == 1 && r0 + 1 < p.rows ? row_ptr<X>(p.x, r0 + 1, n) : nullptr;
  if (!kRms && kR == 1 && n > kNormShortRow) {
    row_stats_one_pass<O, X>(row_ptr<X>(p.x, r0, n), wide, n, inv_n, p.eps, st, next);
  } else {
    row_stats<O, X, kRms, kR>(row_ptr<X>(p.x, r0, n), wide, n, inv_n, p.eps, st);
  }
#pragma GCC unroll 8
  for (int q = 0; q < kR; ++q) {
    const void* xq = kWide ? static_cast<const void*>(wide + q * n) : row_ptr<X>(p.x, r0 + q, n);
    void* const yq = row_ptr<X>(p.y, r0 + q, n);
    if (kR == 1 && stream) {  // only single rows stream; `if constexpr`: no streaming copy for row groups
      if constexpr (kR == 1)
        normalize_row<O, X, XR, P, kRms, kGamma, kBeta, true>(xq, yq, p.gamma, p.beta, n, st[q], next);
    } else {
      normalize_row<O, X, XR, P, kRms, kGamma, kBeta, false>(xq, yq, p.gamma, p.beta, n, st[q], next);
    }
    if (!kRms && p.mean) p.mean[r0 + q] = st[q].m1 + st[q].c;
    if (p.rstd) p.rstd[r0 + q] = st[q].r;
  }
}

// Short rows (n <= kV * O::kLanes, kV = 1..4 vectors per row): `count` (1..kLanes) rows from r0,
// with the statistics of row q in lane q, so horizontal sums (O::sums), square roots and
// divisions serve kLanes rows at once. Per row the corrected two-pass of row_stats; a row's kV
// vectors are added in order into one vector, whose lanes O::sums adds like O::sum. The row is
// re-read from L1 by each pass; rows narrower than f32 of more than one vector are widened once,
// by the first pass, into `xs` (on the stack, in L1: the same values, lanes past n hold the 0 a
// masked load reads), so the later passes load f32 instead of widening again. gamma and beta are
// loaded (widened) once per group, not once per row. Missing rows (q >= count) are zeros and
// stored nowhere.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta, int kV>
[[gnu::always_inline]] inline void forward_short_rows(const ops::NormForwardProblem& p, std::int64_t r0,
                                                      std::int64_t count, float inv_n) {
  using V = typename O::V;
  constexpr int kL = static_cast<int>(O::kLanes);
  const std::int64_t n = p.n;
  // Elements of vector j of a row: kL, then the tail, then 0 (a masked load of 0 lanes reads nothing).
  auto width = [&](int j) __attribute__((always_inline)) {
    return j * kL + kL <= n ? std::int64_t{kL} : n > j * kL ? n - j * kL : std::int64_t{0};
  };
  constexpr bool kStash = X != DType::f32 && kV > 1;
  alignas(64) float xs[kStash ? kL * kV * kL : 1];
  // The first pass's load: lanes past n read 0; a copy widened to f32 goes to xs.
  auto first_x = [&](int q, int j) __attribute__((always_inline)) {
    const V v = O::template load<X>(row_ptr<X>(p.x, r0 + q, n), j * kL, width(j));
    if constexpr (kStash) O::store(xs + (q * kV + j) * kL, v);
    return v;
  };
  auto load_x = [&](int q, int j) __attribute__((always_inline)) {
    if constexpr (kStash) {
      return O::load(xs + (q * kV + j) * kL);
    } else {
      return O::template load<X>(row_ptr<X>(p.x, r0 + q, n), j * kL, width(j));
    }
  };
  V t[kL], sq[kL];
  const V inv_nv = O::set1(inv_n), epsv = O::set1(p.eps), one = O::set1(1.0f);
  V m1 = O::zero(), c = O::zero(), r;
  if constexpr (kRms) {
    for_rows_across<O, kV>([&](int q) __attribute__((always_inline)) {
      if (q >= count) {  // zeroed here, not before: GCC made the zeroing a rep stos (10% of the time)
        sq[q] = O::zero();
        return;
      }
#pragma GCC unroll 4
      for (int j = 0; j < kV; ++j) {
        const V v = first_x(q, j);
        sq[q] = j == 0 ? O::mul(v, v) : O::fmadd(v, v, sq[q]);
      }
    });
    r = O::div(one, O::sqrt(O::add(O::mul(O::sums(sq), inv_nv), epsv)));
  } else {
    for_rows_across<O, kV>([&](int q) __attribute__((always_inline)) {
      if (q >= count) {
        t[q] = O::zero();
        return;
      }
#pragma GCC unroll 4
      for (int j = 0; j < kV; ++j) t[q] = j == 0 ? first_x(q, 0) : O::add(t[q], first_x(q, j));
    });
    m1 = O::mul(O::sums(t), inv_nv);
    for_rows_across<O, kV>([&](int q) __attribute__((always_inline)) {
      if (q >= count) {
        t[q] = sq[q] = O::zero();
        return;
      }
      const V m = O::lane(m1, q);
#pragma GCC unroll 4
      for (int j = 0; j < kV; ++j) {
        V d = O::sub(load_x(q, j), m);
        if (width(j) < kL) d = O::head(d, width(j));  // lanes past n add nothing
        t[q] = j == 0 ? d : O::add(t[q], d);
        sq[q] = j == 0 ? O::mul(d, d) : O::fmadd(d, d, sq[q]);
      }
    });
    const V sum_d = O::sums(t), sum_dd = O::sums(sq);
    c = O::mul(sum_d, inv_nv);
    const V var = O::floor0(O::mul(O::sub(sum_dd, O::mul(sum_d, c)), inv_nv));
    r = O::div(one, O::sqrt(O::add(var, epsv)));
  }
  const V ncr = O::mul(O::mul(c, r), O::set1(-1.0f));  // -(c*r), exactly
  V gv[kV], bv[kV];
#pragma GCC unroll 4
  for (int j = 0; j < kV; ++j) {
    gv[j] = kGamma ? O::template load<P>(p.gamma, j * kL, width(j)) : O::zero();
    bv[j] = kBeta ? O::template load<P>(p.beta, j * kL, width(j)) : O::zero();
  }
  for_rows_across<O, kV>([&](int q) __attribute__((always_inline)) {
    if (q >= count) return;
    const V rq = O::lane(r, q), mq = O::lane(m1, q), nq = O::lane(ncr, q);
#pragma GCC unroll 4
    for (int j = 0; j < kV; ++j) {
      const std::int64_t w = width(j);
      const V v = load_x(q, j);
      V y = kRms ? O::mul(v, rq) : O::fmadd(O::sub(v, mq), rq, nq);
      if constexpr (kGamma && kBeta) {
        y = O::fmadd(y, gv[j], bv[j]);
      } else if constexpr (kGamma) {
        y = O::mul(y, gv[j]);
      } else if constexpr (kBeta) {
        y = O::add(y, bv[j]);
      }
      O::template store<X>(row_ptr<X>(p.y, r0 + q, n), j * kL, y, w);
    }
  });
  if (!kRms && p.mean) O::template store<DType::f32>(p.mean + r0, 0, O::add(m1, c), count);
  if (p.rstd) O::template store<DType::f32>(p.rstd + r0, 0, r, count);
}

// forward_short_rows over every group of kLanes rows (the last one partial), kV vectors per row.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta, int kV>
void forward_rows_across(const ops::NormForwardProblem& p, int threads, float inv_n) {
  const std::int64_t rows = p.rows, groups = (rows + O::kLanes - 1) / O::kLanes;
  auto run = [&](std::int64_t g) __attribute__((always_inline)) {
    const std::int64_t r0 = g * O::kLanes;
    forward_short_rows<O, X, P, kRms, kGamma, kBeta, kV>(p, r0, min_i64(O::kLanes, rows - r0), inv_n);
  };
  if (threads > 1) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t g = 0; g < groups; ++g) run(g);
  } else {
    for (std::int64_t g = 0; g < groups; ++g) run(g);
  }
}

// forward_rows for rows longer than kNormAcrossVectors vectors, parameters of dtype P, on
// `threads` threads. Short rows go in groups of kNormRowGroup (whole groups only; the rest one by
// one).
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta>
void forward_long_rows(const ops::NormForwardProblem& q, int threads, float inv_n) {
  const std::int64_t n = q.n, rows = q.rows;
  const std::int64_t group = n <= kNormShortRow ? kNormRowGroup : 1;
  const std::int64_t groups = rows / group;
  const std::int64_t wide_floats = X != DType::f32 ? group * n : 0;
  // Non-temporal stores for y when it is too large to be found in cache by its reader anyway,
  // and every row starts aligned to a vector.
  constexpr auto kVectorBytes = static_cast<std::int64_t>(O::kLanes * dtype_size(X));
  const bool stream = group == 1 && rows * n * static_cast<std::int64_t>(dtype_size(X)) >= norm_stream_min_bytes() &&
                      reinterpret_cast<std::uintptr_t>(q.y) % kVectorBytes == 0 &&
                      n * static_cast<std::int64_t>(dtype_size(X)) % kVectorBytes == 0;
  auto run = [&](std::int64_t g, float* wide) __attribute__((always_inline)) {
    if (group == kNormRowGroup) {
      forward_row_group<O, X, P, kRms, kGamma, kBeta, kNormRowGroup>(q, g * group, inv_n, wide, false);
    } else {
      forward_row_group<O, X, P, kRms, kGamma, kBeta, 1>(q, g, inv_n, wide, stream);
    }
  };
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    {
      float* const wide = wide_floats ? norm_row_scratch(wide_floats) : nullptr;
#pragma omp for schedule(static) nowait
      for (std::int64_t g = 0; g < groups; ++g) run(g, wide);
      if (stream) O::stream_fence();
    }
  } else {
    float* const wide = wide_floats ? norm_row_scratch(wide_floats) : nullptr;
    for (std::int64_t g = 0; g < groups; ++g) run(g, wide);
    if (stream) O::stream_fence();
  }
  float* const wide = wide_floats ? norm_row_scratch(wide_floats) : nullptr;
  for (std::int64_t r = groups * group; r < rows; ++r)
    forward_row_group<O, X, P, kRms, kGamma, kBeta, 1>(q, r, inv_n, wide, false);
}

// All rows: x, y [rows, n]; mean, rstd [rows]. Rows are independent: static split over threads
// when the call is large enough, else a plain loop on the calling thread.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta>
void forward_rows(const ops::NormForwardProblem& p) {
  const std::int64_t n = p.n, rows = p.rows;
  const float inv_n = 1.0f / static_cast<float>(n);
  const int threads = rows >= 2 && rows * n >= kNormParallelMinElements ? num_threads() : 1;
  if (n <= kNormAcrossVectors * O::kLanes) {  // groups of kLanes rows across lanes
    // One vector, or up to four (rows of 2 or 3 vectors read zeros for the rest: one
    // instantiation less each, for the compile time).
    if (n <= O::kLanes) return forward_rows_across<O, X, P, kRms, kGamma, kBeta, 1>(p, threads, inv_n);
    return forward_rows_across<O, X, P, kRms, kGamma, kBeta, kNormAcrossVectors>(p, threads, inv_n);
  }
  // bf16/f16 gamma and beta widened once per call (exact) into the calling thread's scratch, read
  // by every thread: rows then load f32 parameters instead of widening both on every row. Only
  // while a row's working set (x, its f32 copy, f32 parameters) fits in L1: at 8192x4096 the
  // doubled parameters made bf16 rows from DRAM 10% slower (norm_bench, 4 alternations).
  constexpr std::int64_t kParams = (kGamma ? 1 : 0) + (kBeta ? 1 : 0);
  if constexpr (P != DType::f32 && kParams > 0) {
    if (n * static_cast<std::int64_t>(dtype_size(X) + 4 + 4 * kParams) <= cpu_features().caches.l1d) {
      ops::NormForwardProblem q = p;
      float* const w = norm_scratch(2 * n);
      if (kGamma) O::template load_row<P>(p.gamma, n, w);
      if (kBeta) O::template load_row<P>(p.beta, n, w + n);
      q.gamma = kGamma ? w : nullptr;
      q.beta = kBeta ? w + n : nullptr;
      return forward_long_rows<O, X, DType::f32, kRms, kGamma, kBeta>(q, threads, inv_n);
    }
  }
  return forward_long_rows<O, X, P, kRms, kGamma, kBeta>(p, threads, inv_n);
}

// The one place where the runtime dtypes and the presence of gamma/beta become template
// parameters (P = X when the parameters have x's dtype, else f32).
template <class O, bool kRms>
void norm_forward_dispatch(const ops::NormForwardProblem& p) {
  auto with_params = [&]<DType X, DType P>() {
    const bool g = p.gamma != nullptr, b = p.beta != nullptr;
    if constexpr (kRms) {
      if (g) return forward_rows<O, X, P, true, true, false>(p);
      return forward_rows<O, X, P, true, false, false>(p);
    } else {
      if (g && b) return forward_rows<O, X, P, false, true, true>(p);
      if (g) return forward_rows<O, X, P, false, true, false>(p);
      if (b) return forward_rows<O, X, P, false, false, true>(p);
      return forward_rows<O, X, P, false, false, false>(p);
    }
  };
  auto with_x = [&]<DType X>() {
    if (p.param_dtype == DType::f32) return with_params.template operator()<X, DType::f32>();
    return with_params.template operator()<X, X>();
  };
  visit_dtype(p.x_dtype, with_x);
}

}  // namespace
}  // namespace ampkit::cpu
