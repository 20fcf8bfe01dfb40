// LayerNorm/RMSNorm backward, templated over the ISA's vector operations (kernels layer,
// internal): dx per row, dgamma/dbeta by fixed 32-row blocks combined in block order (bits
// independent of the thread count). Included by norm_bwd_avx512.cpp and norm_bwd_avx2.cpp.
// Math, rounding and reduction order: docs/NUMERICS.md "LayerNorm and RMSNorm".
#pragma once

#include <cstdint>

#include "ampkit/threading.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/norm/norm_rows.hpp"

namespace ampkit::cpu {
namespace {

// Columns per task when adding block partials into the totals.
constexpr std::int64_t kNormCombineChunk = 512;
// Blocks computed per thread before their partials are added into the totals (bounds the
// scratch; the result does not depend on it).
constexpr std::int64_t kNormBlocksPerThreadPerWave = 2;

// One row. dy, x, dx: [n] of dtype X; gamma: [n] of dtype P; mean, rstd: this row's values.
// With g = gamma*dy and xhat = (x - mean)*rstd (mean = 0 for RMSNorm):
//   pass 1: a = sum(g)/n (LayerNorm), b = sum(g*xhat)/n;
//           with kGrads: pdg += dy*xhat, pdb += dy (fp32 block partials, padded to whole vectors)
//   pass 2 (with kDx): dx = rstd * ((g - a) - xhat*b)
// Without kNeedX (only dbeta requested) x, mean and rstd are not read: pdb += dy.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kNeedX, bool kDx, bool kGrads>
[[gnu::always_inline]] inline void backward_row(const void* dy, const void* x, float mean, float rstd,
                         const void* gamma, void* dx, float* pdg, float* pdb, std::int64_t n) {
  using V = typename O::V;
  constexpr std::int64_t kL = O::kLanes;
  if constexpr (!kNeedX) {
    for_row<O>(n, [&](int, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
      const V d = O::template load<X>(dy, i, k);
      O::template store<DType::f32>(pdb, i, O::add(O::template load<DType::f32>(pdb, i, kL), d),
                                    kL);
    });
    return;
  } else {
    const V mv = O::set1(mean), rv = O::set1(rstd);
    auto xhat_at = [&](std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
      V v = O::template load<X>(x, i, k);
      if constexpr (!kRms) v = O::sub(v, mv);
      return O::mul(v, rv);
    };
    auto g_at = [&](std::int64_t i, std::int64_t k, V d) __attribute__((always_inline)) {
      if constexpr (kGamma) return O::mul(O::template load<P>(gamma, i, k), d);
      return d;
    };
    V sg[2] = {O::zero(), O::zero()}, sgx[2] = {O::zero(), O::zero()};
    for_row<O>(n, [&](int s, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
      const V d = O::template load<X>(dy, i, k);  // lanes past the tail: 0, so g = 0 there
      const V xh = xhat_at(i, k);
      if constexpr (kDx) {
        const V g = g_at(i, k, d);
        if constexpr (!kRms) sg[s] = O::add(sg[s], g);
        sgx[s] = O::fmadd(g, xh, sgx[s]);
      }
      if constexpr (kGrads) {
        O::template store<DType::f32>(
            pdg, i, O::fmadd(d, xh, O::template load<DType::f32>(pdg, i, kL)), kL);
        if constexpr (!kRms)
          O::template store<DType::f32>(
              pdb, i, O::add(O::template load<DType::f32>(pdb, i, kL), d), kL);
      }
    });
    if constexpr (kDx) {
      const float nf = static_cast<float>(n);
      const V av = O::set1(kRms ? 0.0f : O::sum(O::add(sg[0], sg[1])) / nf);
      const V bv = O::set1(O::sum(O::add(sgx[0], sgx[1])) / nf);
      for_row<O>(n, [&](int, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
        const V g = g_at(i, k, O::template load<X>(dy, i, k));
        const V xh = xhat_at(i, k);
        const V t = kRms ? O::fnmadd(xh, bv, g) : O::fnmadd(xh, bv, O::sub(g, av));
        O::template store<X>(dx, i, O::mul(rv, t), k);
      });
    }
  }
}

// All rows. Without dgamma/dbeta: rows are independent (static split over threads when large).
// With them: rows are cut into blocks of kNormRowBlock; block b's fp32 partials (n sums each for
// dgamma and dbeta, row order) are computed by any thread, a wave of blocks at a time, and then
// added into the fp32 totals in block order, column by column. Finally dgamma = total (+ old
// value with accumulate), rounded once to P.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kNeedX>
void backward_rows(const NormBackwardProblem& p) {
  using V = typename O::V;
  constexpr std::int64_t kL = O::kLanes;
  const std::int64_t n = p.n, rows = p.rows;
  const bool grads = p.dgamma != nullptr || p.dbeta != nullptr;
  const int threads = rows >= 2 && rows * n >= kNormParallelMinElements ? num_threads() : 1;
  auto row = [&]<bool kDx, bool kGrads>(std::int64_t r, float* pdg, float* pdb)
                  __attribute__((always_inline)) {
    backward_row<O, X, P, kRms, kGamma, kNeedX, kDx, kGrads>(
        row_ptr<X>(p.dy, r, n), kNeedX ? row_ptr<X>(p.x, r, n) : nullptr,
        p.mean ? p.mean[r] : 0.0f, p.rstd ? p.rstd[r] : 0.0f, p.gamma,
        kDx ? row_ptr<X>(p.dx, r, n) : nullptr, pdg, pdb, n);
  };
  if (!grads) {
    if (threads > 1) {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t r = 0; r < rows; ++r) row.template operator()<true, false>(r, nullptr, nullptr);
    } else {
      for (std::int64_t r = 0; r < rows; ++r) row.template operator()<true, false>(r, nullptr, nullptr);
    }
    return;
  }
  // Scratch: totals [2][stride] (dgamma, dbeta), then `wave` block partials [2][stride] each.
  const std::int64_t stride = (n + 15) / 16 * 16;  // whole vectors of 8 and 16 lanes
  const std::int64_t blocks = (rows + kNormRowBlock - 1) / kNormRowBlock;
  const std::int64_t wave = threads > 1 ? min_i64(blocks, kNormBlocksPerThreadPerWave * threads) : 1;
  float* const total = norm_scratch((2 + 2 * wave) * stride);
  float* const partials = total + 2 * stride;
  for (std::int64_t j = 0; j < 2 * stride; j += kL) O::template store<DType::f32>(total, j, O::zero(), kL);
  const bool dx = p.dx != nullptr;
  auto block = [&](std::int64_t b, std::int64_t slot) {
    float* pdg = partials + slot * 2 * stride;
    float* pdb = pdg + stride;
    for (std::int64_t j = 0; j < 2 * stride; j += kL)
      O::template store<DType::f32>(pdg, j, O::zero(), kL);
    const std::int64_t end = min_i64(rows, (b + 1) * kNormRowBlock);
    for (std::int64_t r = b * kNormRowBlock; r < end; ++r) {
      if (dx) {
        row.template operator()<true, true>(r, pdg, pdb);
      } else {
        row.template operator()<false, true>(r, pdg, pdb);
      }
    }
  };
  // total[j] += partial_0[j] + ... in slot (= block) order, for columns of chunk c.
  auto combine = [&](std::int64_t c, std::int64_t count) {
    const std::int64_t end = min_i64(2 * stride, (c + 1) * kNormCombineChunk);
    for (std::int64_t j = c * kNormCombineChunk; j < end; j += kL) {
      V t = O::template load<DType::f32>(total, j, kL);
      for (std::int64_t s = 0; s < count; ++s)
        t = O::add(t, O::template load<DType::f32>(partials + s * 2 * stride, j, kL));
      O::template store<DType::f32>(total, j, t, kL);
    }
  };
  const std::int64_t chunks = (2 * stride + kNormCombineChunk - 1) / kNormCombineChunk;
  if (threads > 1) {
#pragma omp parallel num_threads(threads)
    for (std::int64_t first = 0; first < blocks; first += wave) {
      const std::int64_t count = min_i64(wave, blocks - first);
#pragma omp for schedule(static)
      for (std::int64_t s = 0; s < count; ++s) block(first + s, s);
#pragma omp for schedule(static)
      for (std::int64_t c = 0; c < chunks; ++c) combine(c, count);
    }
  } else {
    for (std::int64_t b = 0; b < blocks; ++b) {
      block(b, 0);
      for (std::int64_t c = 0; c < chunks; ++c) combine(c, 1);
    }
  }
  // dgamma = total (+ old), rounded once to P; the same for dbeta.
  auto finish = [&](void* out, const float* sums) {
    for_row<O>(n, [&](int, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
      V v = O::template load<DType::f32>(sums, i, kL);
      if (p.accumulate) v = O::add(O::template load<P>(out, i, k), v);
      O::template store<P>(out, i, v, k);
    });
  };
  if (p.dgamma) finish(p.dgamma, total);
  if (p.dbeta) finish(p.dbeta, total + stride);
}

// The one place where the runtime dtypes and the presence of gamma and x become template
// parameters (P = X when the parameters have x's dtype, else f32).
template <class O, bool kRms>
void norm_backward_dispatch(const NormBackwardProblem& p) {
  auto with_params = [&]<DType X, DType P>() {
    if (p.x == nullptr) return backward_rows<O, X, P, kRms, false, false>(p);  // dbeta only
    if (p.gamma != nullptr) return backward_rows<O, X, P, kRms, true, true>(p);
    return backward_rows<O, X, P, kRms, false, true>(p);
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
