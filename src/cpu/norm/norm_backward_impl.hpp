// LayerNorm/RMSNorm backward, templated over the ISA's vector operations (kernels layer,
// internal): dx per row, dgamma/dbeta by fixed 32-row blocks combined in block order (bits
// independent of the thread count). Included by norm_bwd_avx512.cpp and norm_bwd_avx2.cpp.
// Math, rounding and reduction order: docs/NUMERICS.md "LayerNorm and RMSNorm".
#pragma once

#include <algorithm>
#include <cstdint>

#include "ampkit/core/threading.hpp"
#include "core/element.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/norm/norm_rows.hpp"

namespace ampkit::cpu {
namespace {

// Columns per task when adding block partials into the totals.
constexpr std::int64_t kNormCombineChunk = 512;
// Blocks computed before their partials are added into the totals (a wave): at least this many
// per thread, and as many as fit in kNormWaveScratchBytes of partials. Each wave costs two
// barriers, so short rows (small partials, cheap blocks) want long waves: with 2 per thread, a
// 458752 x 56 backward ran 3584 waves and was slower on 2 threads than on 1. The result does
// not depend on the wave: the totals add the block partials in block order either way.
constexpr std::int64_t kNormBlocksPerThreadPerWave = 2;
constexpr std::int64_t kNormWaveScratchBytes = std::int64_t{256} << 10;

// kR rows (q-th at row_ptr(.., q, n)). dy, x, dx: [kR, n] of dtype X; gamma: [n] of dtype P;
// mean, rstd: [kR]. With g = gamma*dy and xhat = (x - mean)*rstd (mean = 0 for RMSNorm):
//   pass 1: a = sum(g)/n (LayerNorm), b = sum(g*xhat)/n;
//           with kGrads: pdg += dy*xhat, pdb += dy (fp32 block partials padded to whole vectors;
//           rows in order)
//   pass 2 (with kDx): dx = rstd*((g - a) - xhat*b), computed as
//           g*rstd - ((x - mean)*(rstd*rstd*b) + rstd*a)
// Each pass runs for all kR rows before the next, so short rows' latency chains overlap.
// Without kNeedX (only dbeta requested) x, mean and rstd are not read: pdb += dy.
// With kDx, x narrower than f32 and short rows (kR > 1: kWide), pass 1 also stores g and
// x - mean (f32) to `wide` ([2][kR][n], per-thread scratch in L1) and pass 2 reads them: the same
// values, computed once. (Measured: faster for n = 56, slower for n = 4096, where the extra
// stores compete with the dgamma/dbeta partials for L1.)
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kNeedX, bool kDx, bool kGrads, int kR>
[[gnu::always_inline]] inline void backward_row_group(const void* dy, const void* x, const float* mean,
                                                      const float* rstd, const void* gamma, void* dx, float* pdg,
                                                      float* pdb, std::int64_t n, float inv_n, std::int64_t rows_after,
                                                      float* wide, bool stream) {
  using V = typename O::V;
  constexpr std::int64_t kL = O::kLanes;
  constexpr bool kWide = kDx && X != DType::f32 && kR > 1;
  if constexpr (!kNeedX) {
#pragma GCC unroll 8
    for (int q = 0; q < kR; ++q) {
      const void* dyq = row_ptr<X>(dy, q, n);
      for_row<O>(
          n, [&](int, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
            const V d = O::template load<X>(dyq, i, k);
            O::template store<DType::f32>(pdb, i, O::add(O::template load<DType::f32>(pdb, i, kL), d), kL);
          });
    }
  } else {
    auto g_at = [&](std::int64_t i, std::int64_t k, V d) __attribute__((always_inline)) {
      if constexpr (kGamma) return O::mul(O::template load<P>(gamma, i, k), d);
      return d;
    };
    V sg[kR][2], sgx[kR][2];
#pragma GCC unroll 8
    for (int q = 0; q < kR; ++q) {
      const void* dyq = row_ptr<X>(dy, q, n);
      const void* xq = row_ptr<X>(x, q, n);
      const V mv = O::set1(kRms ? 0.0f : mean[q]), rv = O::set1(rstd[q]);
      float* const wg = kWide ? wide + q * n : nullptr;
      float* const wx = kWide ? wide + (kR + q) * n : nullptr;
      sg[q][0] = sg[q][1] = sgx[q][0] = sgx[q][1] = O::zero();
      for_row<O>(
          n, [&](int s, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
            const V d = O::template load<X>(dyq, i, k);  // lanes past the tail: 0, so g = 0 there
            V xh = O::template load<X>(xq, i, k);
            if constexpr (!kRms) xh = O::sub(xh, mv);
            if constexpr (kWide) O::template store<DType::f32>(wx, i, xh, k);
            xh = O::mul(xh, rv);
            if constexpr (kDx) {
              const V g = g_at(i, k, d);
              if constexpr (kWide) O::template store<DType::f32>(wg, i, g, k);
              if constexpr (!kRms) sg[q][s] = O::add(sg[q][s], g);
              sgx[q][s] = O::fmadd(g, xh, sgx[q][s]);
            }
            if constexpr (kGrads) {
              O::template store<DType::f32>(pdg, i, O::fmadd(d, xh, O::template load<DType::f32>(pdg, i, kL)), kL);
              if constexpr (!kRms)
                O::template store<DType::f32>(pdb, i, O::add(O::template load<DType::f32>(pdb, i, kL), d), kL);
            }
          });
    }
    if constexpr (kDx) {
#pragma GCC unroll 8
      for (int q = 0; q < kR; ++q) {
        const void* dyq = row_ptr<X>(dy, q, n);
        const void* xq = row_ptr<X>(x, q, n);
        void* dxq = row_ptr<X>(dx, q, n);
        const float r = rstd[q];
        const float a = kRms ? 0.0f : O::sum(O::add(sg[q][0], sg[q][1])) * inv_n;
        const float b = O::sum(O::add(sgx[q][0], sgx[q][1])) * inv_n;
        const V rv = O::set1(r), mv = O::set1(kRms ? 0.0f : mean[q]);
        const V c2 = O::set1(r * r * b), c1 = O::set1(r * a);
        // Long rows: prefetch the next row of x and dy while this one is computed from cache.
        const bool prefetch = kR == 1 && rows_after > 0;
        const void* dy_next = row_ptr<X>(dy, 1, n);
        const void* x_next = row_ptr<X>(x, 1, n);
        for_row<O>(
            n, [&](int, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
              if (prefetch) {
                O::prefetch(dy_next, i * static_cast<std::int64_t>(dtype_size(X)));
                O::prefetch(x_next, i * static_cast<std::int64_t>(dtype_size(X)));
              }
              V g, xm;
              if constexpr (kWide) {
                g = O::template load<DType::f32>(wide + q * n, i, k);
                xm = O::template load<DType::f32>(wide + (kR + q) * n, i, k);  // x - mean
              } else {
                g = g_at(i, k, O::template load<X>(dyq, i, k));
                xm = O::template load<X>(xq, i, k);
                if constexpr (!kRms) xm = O::sub(xm, mv);
              }
              const V t = kRms ? O::mul(xm, c2) : O::fmadd(xm, c2, c1);
              const V out = O::fmsub(g, rv, t);
              if (stream && k == kL) {
                O::template stream<X>(dxq, i, out);
              } else {
                O::template store<X>(dxq, i, out, k);
              }
            });
      }
    }
  }
}

// Short rows (n <= kV * O::kLanes, kV = 1..4 vectors per row, x needed): `count` (1..kLanes)
// rows, with row q's sums a and b in lane q (O::sums; a row's kV vectors are added in order into
// one vector first), otherwise the arithmetic of backward_row_group; the dx pass re-reads x and
// dy from L1. Block partials pdg/pdb (kV vectors, in registers) updated row after row, in row
// order. Shapes as there.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kDx, bool kGrads, int kV>
[[gnu::always_inline]] inline void backward_short_rows(const void* dy, const void* x, const float* mean,
                                                       const float* rstd, const void* gamma, void* dx, float* pdg,
                                                       float* pdb, std::int64_t n, std::int64_t count, float inv_n) {
  using V = typename O::V;
  constexpr int kL = static_cast<int>(O::kLanes);
  // Elements of vector j of a row: kL, then the tail, then 0 (a masked load of 0 lanes reads nothing).
  auto width = [&](int j) __attribute__((always_inline)) {
    return j * kL + kL <= n ? std::int64_t{kL} : n > j * kL ? n - j * kL : std::int64_t{0};
  };
  V sg[kL], sgx[kL], dg[kV], db[kV], gam[kV];
#pragma GCC unroll 4
  for (int j = 0; j < kV; ++j) {
    dg[j] = db[j] = O::zero();
    if constexpr (kGrads) {
      dg[j] = O::template load<DType::f32>(pdg, j * kL, kL);
      db[j] = O::template load<DType::f32>(pdb, j * kL, kL);
    }
    gam[j] = kGamma ? O::template load<P>(gamma, j * kL, width(j)) : O::zero();
  }
  for_rows_across<O, kV>([&](int q) __attribute__((always_inline)) {
    sg[q] = sgx[q] = O::zero();
    if (q >= count) return;
    const void* dyq = row_ptr<X>(dy, q, n);
    const void* xq = row_ptr<X>(x, q, n);
    const V mv = O::set1(kRms ? 0.0f : mean[q]), rv = O::set1(rstd[q]);
#pragma GCC unroll 4
    for (int j = 0; j < kV; ++j) {
      const V d = O::template load<X>(dyq, j * kL, width(j));  // lanes past n: 0
      V xm = O::template load<X>(xq, j * kL, width(j));
      if constexpr (!kRms) xm = O::sub(xm, mv);
      const V xh = O::mul(xm, rv);
      const V g = kGamma ? O::mul(gam[j], d) : d;
      if constexpr (!kRms) sg[q] = j == 0 ? g : O::add(sg[q], g);
      sgx[q] = j == 0 ? O::mul(g, xh) : O::fmadd(g, xh, sgx[q]);
      if constexpr (kGrads) {
        dg[j] = O::fmadd(d, xh, dg[j]);
        if constexpr (!kRms) db[j] = O::add(db[j], d);
      }
    }
  });
  if constexpr (kGrads) {
#pragma GCC unroll 4
    for (int j = 0; j < kV; ++j) {
      O::template store<DType::f32>(pdg, j * kL, dg[j], kL);
      if constexpr (!kRms) O::template store<DType::f32>(pdb, j * kL, db[j], kL);
    }
  }
  if constexpr (kDx) {
    const V inv_nv = O::set1(inv_n);
    const V r = O::template load<DType::f32>(rstd, 0, count);
    const V a = kRms ? O::zero() : O::mul(O::sums(sg), inv_nv);
    const V b = O::mul(O::sums(sgx), inv_nv);
    const V c2 = O::mul(O::mul(r, r), b), c1 = O::mul(r, a);
    for_rows_across<O, kV>([&](int q) __attribute__((always_inline)) {
      if (q >= count) return;
      const void* dyq = row_ptr<X>(dy, q, n);
      const void* xq = row_ptr<X>(x, q, n);
      const V mv = O::set1(kRms ? 0.0f : mean[q]);
      const V rq = O::lane(r, q), c2q = O::lane(c2, q), c1q = O::lane(c1, q);
#pragma GCC unroll 4
      for (int j = 0; j < kV; ++j) {
        const V d = O::template load<X>(dyq, j * kL, width(j));
        V xm = O::template load<X>(xq, j * kL, width(j));
        if constexpr (!kRms) xm = O::sub(xm, mv);
        const V g = kGamma ? O::mul(gam[j], d) : d;
        const V t = kRms ? O::mul(xm, c2q) : O::fmadd(xm, c2q, c1q);
        O::template store<X>(row_ptr<X>(dx, q, n), j * kL, O::fmsub(g, rq, t), width(j));
      }
    });
  }
}

// All rows. Without dgamma/dbeta: rows are independent (static split over threads when large).
// With them: rows are cut into blocks of kNormRowBlock; block b's fp32 partials (n sums each for
// dgamma and dbeta, row order) are computed by any thread, a wave of blocks at a time, and then
// added into the fp32 totals in block order, column by column. Finally dgamma = total (+ old
// value with accumulate), rounded once to P.
template <class O, DType X, DType P, bool kRms, bool kGamma, bool kNeedX>
void backward_rows(const ops::NormBackwardProblem& p) {
  using V = typename O::V;
  constexpr std::int64_t kL = O::kLanes;
  const std::int64_t n = p.n, rows = p.rows;
  const bool grads = p.dgamma != nullptr || p.dbeta != nullptr;
  const int threads = rows >= 2 && rows * n >= kNormParallelMinElements ? num_threads() : 1;
  const float inv_n = 1.0f / static_cast<float>(n);
  // Non-temporal stores for dx when it is too large to stay in cache for its reader and every
  // row starts aligned to a vector (long rows only); fenced after each range of rows.
  constexpr auto kVectorBytes = static_cast<std::int64_t>(O::kLanes * dtype_size(X));
  const bool stream = p.dx != nullptr && n > kNormShortRow &&
                      rows * n * static_cast<std::int64_t>(dtype_size(X)) >= norm_stream_min_bytes() &&
                      reinterpret_cast<std::uintptr_t>(p.dx) % kVectorBytes == 0 &&
                      n * static_cast<std::int64_t>(dtype_size(X)) % kVectorBytes == 0;
  // Rows [r0, r0 + kR).
  auto rows_at = [&]<bool kDx, bool kGrads, int kR>(std::int64_t r0, float* pdg, float* pdb, float* wide)
      __attribute__((always_inline)) {
    backward_row_group<O, X, P, kRms, kGamma, kNeedX, kDx, kGrads, kR>(
        row_ptr<X>(p.dy, r0, n), kNeedX ? row_ptr<X>(p.x, r0, n) : nullptr, p.mean ? p.mean + r0 : nullptr,
        p.rstd ? p.rstd + r0 : nullptr, p.gamma, kDx ? row_ptr<X>(p.dx, r0, n) : nullptr, pdg, pdb, n, inv_n,
        rows - r0 - kR, wide, kR == 1 && stream);
  };
  // Rows [begin, end): groups of kLanes rows across lanes when n <= kLanes (x needed), else
  // groups of kNormRowGroup when rows are short, then the rest one by one.
  auto row_range = [&]<bool kDx, bool kGrads>(std::int64_t begin, std::int64_t end, float* pdg, float* pdb)
      __attribute__((always_inline)) {
    std::int64_t r = begin;
    if constexpr (kNeedX) {
      if (n <= kNormAcrossVectors * kL) {
        auto across = [&]<int kV>() __attribute__((always_inline)) {
          for (; r < end; r += kL)
            backward_short_rows<O, X, P, kRms, kGamma, kDx, kGrads, kV>(
                row_ptr<X>(p.dy, r, n), row_ptr<X>(p.x, r, n), p.mean ? p.mean + r : nullptr, p.rstd + r, p.gamma,
                kDx ? row_ptr<X>(p.dx, r, n) : nullptr, pdg, pdb, n, min_i64(kL, end - r), inv_n);
        };
        if (n <= kL) return across.template operator()<1>();
        return across.template operator()<kNormAcrossVectors>();  // as in forward_rows
      }
    }
    // g and x - mean of widened rows (see backward_row_group).
    float* const wide =
        kDx && kNeedX && X != DType::f32 && n <= kNormShortRow ? norm_row_scratch(2 * kNormRowGroup * n) : nullptr;
    if (n <= kNormShortRow)
      for (; r + kNormRowGroup <= end; r += kNormRowGroup)
        rows_at.template operator()<kDx, kGrads, kNormRowGroup>(r, pdg, pdb, wide);
    for (; r < end; ++r) rows_at.template operator()<kDx, kGrads, 1>(r, pdg, pdb, wide);
    if (kDx && stream) O::stream_fence();
  };
  if (!grads) {
    // Independent rows, a static split in groups of `per` rows.
    const std::int64_t per = kNeedX && n <= kNormAcrossVectors * kL ? kL : kNormRowGroup;
    const std::int64_t groups = (rows + per - 1) / per;
    auto group = [&](std::int64_t g) __attribute__((always_inline)) {
      row_range.template operator()<true, false>(g * per, min_i64(rows, (g + 1) * per), nullptr, nullptr);
    };
    if (threads > 1) {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::int64_t g = 0; g < groups; ++g) group(g);
    } else {
      for (std::int64_t g = 0; g < groups; ++g) group(g);
    }
    return;
  }
  // Scratch: totals [2][stride] (dgamma, dbeta), then `wave` block partials [2][stride] each.
  // Whole vectors of 8 and 16 lanes; rows across lanes touch kNormAcrossVectors whole vectors.
  const std::int64_t across = kNeedX && n > kL && n <= kNormAcrossVectors * kL ? kNormAcrossVectors * kL : 0;
  const std::int64_t stride = std::max((n + 15) / 16 * 16, across);
  const std::int64_t blocks = (rows + kNormRowBlock - 1) / kNormRowBlock;
  const std::int64_t fit = kNormWaveScratchBytes / (2 * stride * static_cast<std::int64_t>(sizeof(float)));
  const std::int64_t wave = threads > 1 ? min_i64(blocks, std::max(kNormBlocksPerThreadPerWave * threads, fit)) : 1;
  float* const total = norm_scratch((2 + 2 * wave) * stride);
  float* const partials = total + 2 * stride;
  for (std::int64_t j = 0; j < 2 * stride; j += kL) O::template store<DType::f32>(total, j, O::zero(), kL);
  const bool dx = p.dx != nullptr;
  auto block = [&](std::int64_t b, std::int64_t slot) {
    float* pdg = partials + slot * 2 * stride;
    float* pdb = pdg + stride;
    for (std::int64_t j = 0; j < 2 * stride; j += kL) O::template store<DType::f32>(pdg, j, O::zero(), kL);
    const std::int64_t begin = b * kNormRowBlock, end = min_i64(rows, begin + kNormRowBlock);
    if (dx) {
      row_range.template operator()<true, true>(begin, end, pdg, pdb);
    } else {
      row_range.template operator()<false, true>(begin, end, pdg, pdb);
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
  // dgamma = total (+ old), rounded once to P; the same for dbeta. `accumulate` is read once:
  // UBSan saw p.accumulate read as garbage inside the nested always_inline lambda (GCC 12, -O1).
  const bool accumulate = p.accumulate;
  auto finish = [&](void* out, const float* sums) {
    for_row<O>(
        n, [&](int, std::int64_t i, std::int64_t k) __attribute__((always_inline)) {
          V v = O::template load<DType::f32>(sums, i, kL);
          if (accumulate) v = O::add(O::template load<P>(out, i, k), v);
          O::template store<P>(out, i, v, k);
        });
  };
  if (p.dgamma) finish(p.dgamma, total);
  if (p.dbeta) finish(p.dbeta, total + stride);
}

// The one place where the runtime dtypes and the presence of gamma and x become template
// parameters (P = X when the parameters have x's dtype, else f32).
template <class O, bool kRms>
void norm_backward_dispatch(const ops::NormBackwardProblem& p) {
  auto with_params = [&]<DType X, DType P>() {
    if (p.x == nullptr) return backward_rows<O, X, P, kRms, false, false>(p);  // dbeta only
    if (p.gamma != nullptr) return backward_rows<O, X, P, kRms, true, true>(p);
    return backward_rows<O, X, P, kRms, false, true>(p);
  };
  auto with_x = [&]<DType X>() {
    if (p.param_dtype == DType::f32) return with_params.template operator()<X, DType::f32>();
    return with_params.template operator()<X, X>();
  };
  visit_dtype(p.x_dtype, with_x);
}

}  // namespace
}  // namespace ampkit::cpu
