// LayerNorm/RMSNorm forward, templated over the ISA's vector operations (kernels layer,
// internal). Included by norm_fwd_avx512.cpp and norm_fwd_avx2.cpp, which export the entry
// points of norm_kernels.hpp. Math and rounding: docs/NUMERICS.md "LayerNorm and RMSNorm".
#pragma once

#include <cstdint>

#include "ampkit/core/threading.hpp"
#include "core/element.hpp"
#include "cpu/norm/norm_rows.hpp"
#include "ops/norm/norm_kernels.hpp"

namespace ampkit::cpu {
namespace {

// Per-row statistics: LayerNorm uses m1, c and r; RMSNorm only r.
struct RowStats {
  float m1 = 0.0f, c = 0.0f, r = 0.0f;
};

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
                                             RowStats* st, const void* next) {
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
            if (next) O::prefetch(next, i * static_cast<std::int64_t>(dtype_size(X)));
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
// dtype P (used when kGamma / kBeta). `next` (the next row of x, or null) is prefetched
// meanwhile, so memory keeps streaming while this row is computed from cache.
template <class O, DType X, DType XR, DType P, bool kRms, bool kGamma, bool kBeta>
[[gnu::always_inline]] inline void normalize_row(const void* x, void* y, const void* gamma, const void* beta,
                                                 std::int64_t n, const RowStats& st, const void* next) {
  using V = typename O::V;
  const V rv = O::set1(st.r), m1v = O::set1(st.m1), ncr = O::set1(-(st.c * st.r));
  for_row<O>(
      n, [&](int, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
        if (next) O::prefetch(next, i * static_cast<std::int64_t>(dtype_size(X)));
        V v = O::template load<XR>(x, i, k);
        v = kRms ? O::mul(v, rv) : O::fmadd(O::sub(v, m1v), rv, ncr);
        if constexpr (kGamma && kBeta) {
          v = O::fmadd(v, O::template load<P>(gamma, i, k), O::template load<P>(beta, i, k));
        } else if constexpr (kGamma) {
          v = O::mul(v, O::template load<P>(gamma, i, k));
        } else if constexpr (kBeta) {
          v = O::add(v, O::template load<P>(beta, i, k));
        }
        O::template store<X>(y, i, v, k);
      });
}

// kR rows starting at row r0: statistics, then y, mean and rstd. After the first pass a row is
// in L1/L2, so memory sees one read of x and one write of y.
// wide: [kR, n] f32 scratch (used when x is narrower than f32).
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta, int kR>
[[gnu::always_inline]] inline void forward_row_group(const NormForwardProblem& p, std::int64_t r0, float inv_n,
                                                     float* wide) {
  constexpr bool kWide = X != DType::f32;
  constexpr DType XR = kWide ? DType::f32 : X;
  const std::int64_t n = p.n;
  RowStats st[kR];
  // Long rows (kR = 1) prefetch the next row while working on this one from cache.
  const void* next = kR == 1 && r0 + 1 < p.rows ? row_ptr<X>(p.x, r0 + 1, n) : nullptr;
  row_stats<O, X, kRms, kR>(row_ptr<X>(p.x, r0, n), wide, n, inv_n, p.eps, st, next);
#pragma GCC unroll 8
  for (int q = 0; q < kR; ++q) {
    const void* xq = kWide ? static_cast<const void*>(wide + q * n) : row_ptr<X>(p.x, r0 + q, n);
    normalize_row<O, X, XR, P, kRms, kGamma, kBeta>(xq, row_ptr<X>(p.y, r0 + q, n), p.gamma, p.beta, n, st[q], next);
    if (!kRms && p.mean) p.mean[r0 + q] = st[q].m1 + st[q].c;
    if (p.rstd) p.rstd[r0 + q] = st[q].r;
  }
}

// Short rows (n <= O::kLanes): `count` (1..kLanes) rows from r0, one vector each, with the
// statistics of row q in lane q, so horizontal sums (O::sums), square roots and divisions serve
// kLanes rows at once. Same arithmetic, pairing and rounding per row as forward_row_group (the
// same bits); missing rows (q >= count) are zeros and stored nowhere.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta>
[[gnu::always_inline]] inline void forward_short_rows(const NormForwardProblem& p, std::int64_t r0, std::int64_t count,
                                                      float inv_n) {
  using V = typename O::V;
  constexpr int kL = static_cast<int>(O::kLanes);
  const std::int64_t n = p.n;
  V v[kL], t[kL], sq[kL];
#pragma GCC unroll 16
  for (int q = 0; q < kL; ++q) v[q] = q < count ? O::template load<X>(row_ptr<X>(p.x, r0 + q, n), 0, n) : O::zero();
  const V inv_nv = O::set1(inv_n), epsv = O::set1(p.eps), one = O::set1(1.0f);
  V m1 = O::zero(), c = O::zero(), r;
  if constexpr (kRms) {
#pragma GCC unroll 16
    for (int q = 0; q < kL; ++q) sq[q] = O::mul(v[q], v[q]);
    r = O::div(one, O::sqrt(O::add(O::mul(O::sums(sq), inv_nv), epsv)));
  } else {
    m1 = O::mul(O::sums(v), inv_nv);
#pragma GCC unroll 16
    for (int q = 0; q < kL; ++q) {
      t[q] = O::head(O::sub(v[q], O::lane(m1, q)), n);  // lanes past n add nothing
      sq[q] = O::mul(t[q], t[q]);
    }
    const V sum_d = O::sums(t), sum_dd = O::sums(sq);
    c = O::mul(sum_d, inv_nv);
    const V var = O::floor0(O::mul(O::sub(sum_dd, O::mul(sum_d, c)), inv_nv));
    r = O::div(one, O::sqrt(O::add(var, epsv)));
  }
  const V ncr = O::mul(O::mul(c, r), O::set1(-1.0f));  // -(c*r), exactly
#pragma GCC unroll 16
  for (int q = 0; q < kL; ++q) {
    if (q >= count) break;
    V y = kRms ? O::mul(v[q], O::lane(r, q)) : O::fmadd(t[q], O::lane(r, q), O::lane(ncr, q));  // t = x - m1 (head)
    if constexpr (kGamma && kBeta) {
      y = O::fmadd(y, O::template load<P>(p.gamma, 0, n), O::template load<P>(p.beta, 0, n));
    } else if constexpr (kGamma) {
      y = O::mul(y, O::template load<P>(p.gamma, 0, n));
    } else if constexpr (kBeta) {
      y = O::add(y, O::template load<P>(p.beta, 0, n));
    }
    O::template store<X>(row_ptr<X>(p.y, r0 + q, n), 0, y, n);
  }
  if (!kRms && p.mean) O::template store<DType::f32>(p.mean + r0, 0, O::add(m1, c), count);
  if (p.rstd) O::template store<DType::f32>(p.rstd + r0, 0, r, count);
}

// All rows: x, y [rows, n]; mean, rstd [rows]. Rows are independent: static split over threads
// when the call is large enough, else a plain loop on the calling thread. Short rows go in
// groups of kNormRowGroup (whole groups only; the rest one by one).
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta>
void forward_rows(const NormForwardProblem& p) {
  const std::int64_t n = p.n, rows = p.rows;
  const float inv_n = 1.0f / static_cast<float>(n);
  const int threads = rows >= 2 && rows * n >= kNormParallelMinElements ? num_threads() : 1;
  if (n <= O::kLanes) {  // groups of kLanes rows across lanes, the last one partial
    const std::int64_t groups = (rows + O::kLanes - 1) / O::kLanes;
    auto run = [&](std::int64_t g) __attribute__((always_inline)) {
      const std::int64_t r0 = g * O::kLanes;
      forward_short_rows<O, X, P, kRms, kGamma, kBeta>(p, r0, min_i64(O::kLanes, rows - r0), inv_n);
    };
    if (threads > 1) {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t g = 0; g < groups; ++g) run(g);
    } else {
      for (std::int64_t g = 0; g < groups; ++g) run(g);
    }
    return;
  }
  const std::int64_t group = n <= kNormShortRow ? kNormRowGroup : 1;
  const std::int64_t groups = rows / group;
  const std::int64_t wide_floats = X != DType::f32 ? group * n : 0;
  auto run = [&](std::int64_t g, float* wide) __attribute__((always_inline)) {
    if (group == kNormRowGroup) {
      forward_row_group<O, X, P, kRms, kGamma, kBeta, kNormRowGroup>(p, g * group, inv_n, wide);
    } else {
      forward_row_group<O, X, P, kRms, kGamma, kBeta, 1>(p, g, inv_n, wide);
    }
  };
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    {
      float* const wide = wide_floats ? norm_row_scratch(wide_floats) : nullptr;
#pragma omp for schedule(static)
      for (std::int64_t g = 0; g < groups; ++g) run(g, wide);
    }
  } else {
    float* const wide = wide_floats ? norm_row_scratch(wide_floats) : nullptr;
    for (std::int64_t g = 0; g < groups; ++g) run(g, wide);
  }
  float* const wide = wide_floats ? norm_row_scratch(wide_floats) : nullptr;
  for (std::int64_t r = groups * group; r < rows; ++r)
    forward_row_group<O, X, P, kRms, kGamma, kBeta, 1>(p, r, inv_n, wide);
}

// The one place where the runtime dtypes and the presence of gamma/beta become template
// parameters (P = X when the parameters have x's dtype, else f32).
template <class O, bool kRms>
void norm_forward_dispatch(const NormForwardProblem& p) {
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
