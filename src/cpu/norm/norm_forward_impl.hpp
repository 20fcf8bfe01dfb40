// LayerNorm/RMSNorm forward, templated over the ISA's vector operations (kernels layer,
// internal). Included by norm_fwd_avx512.cpp and norm_fwd_avx2.cpp, which export the entry
// points of norm_kernels.hpp. Math and rounding: docs/NUMERICS.md "LayerNorm and RMSNorm".
#pragma once

#include <cstdint>

#include "ampkit/threading.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/norm/norm_rows.hpp"

namespace ampkit::cpu {
namespace {

// One row. x, y: [n] of dtype X; gamma, beta: [n] of dtype P (used when kGamma / kBeta).
// LayerNorm, corrected two-pass in fp32:
//   m1 = sum(x)/n; d = x - m1; sd = sum(d); sdd = sum(d*d); c = sd/n;
//   var = (sdd - sd*c)/n; rstd = 1/sqrt(var + eps); mean = m1 + c;
//   y = ((x - m1) - c) * rstd * gamma + beta
// RMSNorm: rstd = 1/sqrt(sum(x*x)/n + eps); y = x * rstd * gamma.
// The row is read three times (LayerNorm) or twice (RMSNorm); after the first pass it is in
// L1/L2, so memory sees one read of x and one write of y.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta>
[[gnu::always_inline]] inline void forward_row(const void* x, void* y, const void* gamma, const void* beta,
                        std::int64_t n, float eps, float* mean, float* rstd) {
  using V = typename O::V;
  const float nf = static_cast<float>(n);
  V acc[2] = {O::zero(), O::zero()};
  float m1 = 0.0f, c = 0.0f, r = 0.0f;
  if constexpr (kRms) {
    for_row<O>(n, [&](int s, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
      const V v = O::template load<X>(x, i, k);
      acc[s] = O::fmadd(v, v, acc[s]);
    });
    r = 1.0f / O::sqrt(O::sum(O::add(acc[0], acc[1])) / nf + eps);
  } else {
    for_row<O>(n, [&](int s, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
      acc[s] = O::add(acc[s], O::template load<X>(x, i, k));
    });
    m1 = O::sum(O::add(acc[0], acc[1])) / nf;
    const V m1v = O::set1(m1);
    V sd[2] = {O::zero(), O::zero()}, sdd[2] = {O::zero(), O::zero()};
    for_row<O>(n, [&](int s, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
      // Lanes past the tail read 0; zero their deviation so they add nothing.
      V d = O::sub(O::template load<X>(x, i, k), m1v);
      if (k < O::kLanes) d = O::head(d, k);
      sd[s] = O::add(sd[s], d);
      sdd[s] = O::fmadd(d, d, sdd[s]);
    });
    const float sum_d = O::sum(O::add(sd[0], sd[1]));
    const float sum_dd = O::sum(O::add(sdd[0], sdd[1]));
    c = sum_d / nf;
    float var = (sum_dd - sum_d * c) / nf;
    if (var < 0.0f) var = 0.0f;  // rounding only; NaN stays NaN
    r = 1.0f / O::sqrt(var + eps);
    if (mean) *mean = m1 + c;
  }
  if (rstd) *rstd = r;
  const V rv = O::set1(r), m1v = O::set1(m1), cv = O::set1(c);
  for_row<O>(n, [&](int, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
    V v = O::template load<X>(x, i, k);
    if constexpr (!kRms) v = O::sub(O::sub(v, m1v), cv);
    v = O::mul(v, rv);
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

// All rows: x, y [rows, n]; mean, rstd [rows]. Rows are independent: static split over threads
// when the call is large enough, else a plain loop on the calling thread.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kBeta>
void forward_rows(const NormForwardProblem& p) {
  const std::int64_t n = p.n;
  auto row = [&](std::int64_t r) __attribute__((always_inline)) {
    forward_row<O, X, P, kRms, kGamma, kBeta>(row_ptr<X>(p.x, r, n), row_ptr<X>(p.y, r, n),
                                              p.gamma, p.beta, n, p.eps,
                                              p.mean ? p.mean + r : nullptr,
                                              p.rstd ? p.rstd + r : nullptr);
  };
  const int threads = p.rows >= 2 && p.rows * n >= kNormParallelMinElements ? num_threads() : 1;
  if (threads > 1) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t r = 0; r < p.rows; ++r) row(r);
  } else {
    for (std::int64_t r = 0; r < p.rows; ++r) row(r);
  }
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
  switch (p.x_dtype) {
    case DType::f32: return with_x.template operator()<DType::f32>();
    case DType::bf16: return with_x.template operator()<DType::bf16>();
    case DType::f16: return with_x.template operator()<DType::f16>();
  }
}

}  // namespace
}  // namespace ampkit::cpu
