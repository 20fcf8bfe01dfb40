// Register tiles of the vector attention kernels, templated over the ISA's vector operations
// (kernels layer, internal): scores against a transposed key block, causal weighted row sums
// (out = P V, dq = dS K) and their transposes (dk += dS^T q, dv += P^T dout), and the row
// dtype dispatch. Every sum of a tile runs in one fixed order whatever the tiling, so the bits
// depend neither on the tile sizes nor on the split over threads. Included by
// attention_forward_impl.hpp and attention_backward_impl.hpp; everything has internal linkage.
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"

namespace ampkit::cpu {
namespace {

using AttentionLoadRows = void (*)(const void*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, float*,
                                   std::int64_t);
using AttentionStoreRows = void (*)(void*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, const float*,
                                    std::int64_t, const float*, std::int64_t, bool);

// The rows loader / storer of a dtype, chosen once per call.
template <class O>
AttentionLoadRows rows_loader(DType t) {
  if (t == DType::bf16) return &O::template load_rows<DType::bf16>;
  if (t == DType::f16) return &O::template load_rows<DType::f16>;
  return &O::template load_rows<DType::f32>;
}
template <class O>
AttentionStoreRows rows_storer(DType t) {
  if (t == DType::bf16) return &O::template store_rows<DType::bf16>;
  if (t == DType::f16) return &O::template store_rows<DType::f16>;
  return &O::template store_rows<DType::f32>;
}

// Hints rows [0, rows) of an operand (dtype t; row r: elements [offset + r stride, + n)) into
// the cache, for reading (or writing), one prefetch per cache line; never faults.
inline void prefetch_rows(const void* base, DType t, std::int64_t offset, std::int64_t stride, std::int64_t rows,
                          std::int64_t n, bool write) {
  const std::int64_t size = t == DType::f32 ? 4 : 2;
  const char* p = static_cast<const char*>(base) + offset * size;
  for (std::int64_t r = 0; r < rows; ++r, p += stride * size)
    for (std::int64_t x = 0; x < n * size; x += 64) {
      if (write) {
        __builtin_prefetch(p + x, 1, 3);
      } else {
        __builtin_prefetch(p + x, 0, 3);
      }
    }
}

// dst: [cols, ldd] = the transpose of src: [rows, lds], both multiples of L (whole blocks).
template <class O>
void transpose_rows(const float* src, std::int64_t lds, std::int64_t rows, std::int64_t cols, float* dst,
                    std::int64_t ldd) {
  constexpr std::int64_t L = O::kLanes;
  for (std::int64_t r = 0; r < rows; r += L)
    for (std::int64_t c = 0; c < cols; c += L) O::transpose_block(src + r * lds + c, lds, dst + c * ldd + r, ldd);
}

// Query rows per forward task and per backward block; a multiple of every row tile.
constexpr std::int64_t kVectorRowBlock = 64;

inline std::int64_t round_up(std::int64_t n, std::int64_t m) { return (n + m - 1) / m * m; }

// s: [R, NV * L] at lds; a: [R, d] at lda; bt: [d, *] at ldb (transposed keys).
//   s[r, j] = sum_c a[r, c] bt[c, j], c = 0, 1, ..., d - 1 in order (from 0, one fma each)
template <class O, int R, int NV>
[[gnu::always_inline]] inline void score_tile(const float* __restrict a, std::int64_t lda, const float* __restrict bt,
                                              std::int64_t ldb, std::int64_t d, float* __restrict s, std::int64_t lds) {
  using V = typename O::V;
  constexpr std::int64_t L = O::kLanes;
  V acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = O::zero();
  for (std::int64_t c = 0; c < d; ++c) {
    V b[NV];
    for (int v = 0; v < NV; ++v) b[v] = O::load(bt + c * ldb + v * L);
    for (int r = 0; r < R; ++r) {
      const V ar = O::set1(a[r * lda + c]);
      for (int v = 0; v < NV; ++v) acc[r][v] = O::fmadd(ar, b[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) O::store(s + r * lds + v * L, acc[r][v]);
}

// Scores of query rows i0 + r, r < rows, against the keys they see: s[r, j] for j < round_up(
// min(i0 + r + 1, keys), L) (lanes past i0 + r hold values of later keys, never used).
// a: [round_up(rows, kScoreRows), d] (rows past `rows` readable), bt: [d, ldb] with ldb >=
// round_up(keys, L) (columns past `keys` readable), s: [round_up(rows, kScoreRows), lds].
template <class O>
void score_rows(const float* a, std::int64_t lda, const float* bt, std::int64_t ldb, std::int64_t d, std::int64_t i0,
                std::int64_t rows, std::int64_t keys, float* s, std::int64_t lds) {
  constexpr int R = O::kScoreRows, NV = O::kScoreVecs;
  constexpr std::int64_t L = O::kLanes;
  for (std::int64_t g = 0; g < rows; g += R) {
    const std::int64_t last = i0 + g + R < keys ? i0 + g + R : keys;  // keys of the group's last row
    const std::int64_t vecs = (last + L - 1) / L;
    const float* ag = a + g * lda;
    float* sg = s + g * lds;
    std::int64_t v0 = 0;
    for (; v0 + NV <= vecs; v0 += NV) score_tile<O, R, NV>(ag, lda, bt + v0 * L, ldb, d, sg + v0 * L, lds);
    switch (vecs - v0) {
      case 0: break;
      case 1: score_tile<O, R, 1>(ag, lda, bt + v0 * L, ldb, d, sg + v0 * L, lds); break;
      case 2: score_tile<O, R, (NV > 2 ? 2 : 1)>(ag, lda, bt + v0 * L, ldb, d, sg + v0 * L, lds); break;
      default: score_tile<O, R, (NV > 3 ? 3 : 1)>(ag, lda, bt + v0 * L, ldb, d, sg + v0 * L, lds); break;
    }
  }
}

// y: [R, NC * L] at ldy, rows i = i0 + r (r < live); w: [R, *] at ldw; x: [*, NC * L] at ldx.
//   y[r, c] = sum_{j <= i0 + r} w[r, j] x[j, c], j = 0, 1, ... in order (from 0, one fma each)
// Rows r >= live are left unwritten.
template <class O, int R, int NC>
[[gnu::always_inline]] inline void causal_sum_tile(const float* __restrict w, std::int64_t ldw,
                                                   const float* __restrict x, std::int64_t ldx, std::int64_t i0,
                                                   int live, float* __restrict y, std::int64_t ldy) {
  using V = typename O::V;
  constexpr std::int64_t L = O::kLanes;
  V acc[R][NC];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NC; ++v) acc[r][v] = O::zero();
  for (std::int64_t j = 0; j < i0; ++j) {  // every row sees key j
    V xv[NC];
    for (int v = 0; v < NC; ++v) xv[v] = O::load(x + j * ldx + v * L);
    for (int r = 0; r < R; ++r) {
      const V wr = O::set1(w[r * ldw + j]);
      for (int v = 0; v < NC; ++v) acc[r][v] = O::fmadd(wr, xv[v], acc[r][v]);
    }
  }
  for (int jj = 0; jj < live; ++jj) {  // the diagonal: row r sees key i0 + jj when jj <= r
    const std::int64_t j = i0 + jj;
    V xv[NC];
    for (int v = 0; v < NC; ++v) xv[v] = O::load(x + j * ldx + v * L);
    for (int r = 0; r < R; ++r) {
      if (r < jj) continue;
      const V wr = O::set1(w[r * ldw + j]);
      for (int v = 0; v < NC; ++v) acc[r][v] = O::fmadd(wr, xv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < live; ++r)
    for (int v = 0; v < NC; ++v) O::store(y + r * ldy + v * L, acc[r][v]);
}

// y[r, :cols] = sum_{j <= i0 + r} w[r, j] x[j, :cols] for r < rows (rows i0 + r), j in order;
// cols a multiple of L; x rows 0 .. i0 + rows - 1 read; y rows < rows written.
template <class O>
void causal_sum_rows(const float* w, std::int64_t ldw, const float* x, std::int64_t ldx, std::int64_t i0,
                     std::int64_t rows, std::int64_t cols, float* y, std::int64_t ldy) {
  constexpr int R = O::kSumRows, NC = O::kSumVecs;
  constexpr std::int64_t L = O::kLanes;
  for (std::int64_t g = 0; g < rows; g += R) {
    const int live = static_cast<int>(rows - g < R ? rows - g : R);
    const float* wg = w + g * ldw;
    float* yg = y + g * ldy;
    std::int64_t c = 0;
    for (; c + NC * L <= cols; c += NC * L) causal_sum_tile<O, R, NC>(wg, ldw, x + c, ldx, i0 + g, live, yg + c, ldy);
    for (; c < cols; c += L) causal_sum_tile<O, R, 1>(wg, ldw, x + c, ldx, i0 + g, live, yg + c, ldy);
  }
}

// y: [R, NC * L] at ldy, key rows j = j0 + r; w: [*, *] at ldw, row i - i0 of query i; x: [*, NC * L].
//   y[r, c] += sum_{i in [max(i0, j0 + r), i1)} w[i - i0, j0 + r] x[i, c], i in increasing order
// (y's old value first, one fma per term): over successive query blocks [i0, i1), the whole sum
// runs over i in order.
template <class O, int R, int NC>
[[gnu::always_inline]] inline void transposed_sum_tile(const float* __restrict w, std::int64_t ldw,
                                                       const float* __restrict x, std::int64_t ldx, std::int64_t i0,
                                                       std::int64_t i1, std::int64_t j0, float* __restrict y,
                                                       std::int64_t ldy) {
  using V = typename O::V;
  constexpr std::int64_t L = O::kLanes;
  V acc[R][NC];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NC; ++v) acc[r][v] = O::load(y + r * ldy + v * L);
  std::int64_t i = i0 > j0 ? i0 : j0;
  const std::int64_t full = j0 + R - 1 < i1 ? j0 + R - 1 : i1;  // from here every row r has i >= j0 + r
  for (; i < full; ++i) {
    V xv[NC];
    for (int v = 0; v < NC; ++v) xv[v] = O::load(x + i * ldx + v * L);
    const float* wi = w + (i - i0) * ldw + j0;
    for (int r = 0; r < R; ++r) {
      if (i < j0 + r) continue;
      const V wr = O::set1(wi[r]);
      for (int v = 0; v < NC; ++v) acc[r][v] = O::fmadd(wr, xv[v], acc[r][v]);
    }
  }
  for (; i < i1; ++i) {
    V xv[NC];
    for (int v = 0; v < NC; ++v) xv[v] = O::load(x + i * ldx + v * L);
    const float* wi = w + (i - i0) * ldw + j0;
    for (int r = 0; r < R; ++r) {
      const V wr = O::set1(wi[r]);
      for (int v = 0; v < NC; ++v) acc[r][v] = O::fmadd(wr, xv[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NC; ++v) O::store(y + r * ldy + v * L, acc[r][v]);
}

// y[j, :cols] += sum_{i in [max(i0, j), i1)} w[i - i0, j] x[i, :cols] for every key j < i1, i in
// increasing order. y: [round_up(i1, kSumRows), ldy] (rows past i1 are read and written back
// unchanged).
template <class O>
void transposed_sum_rows(const float* w, std::int64_t ldw, const float* x, std::int64_t ldx, std::int64_t i0,
                         std::int64_t i1, std::int64_t cols, float* y, std::int64_t ldy) {
  constexpr int R = O::kSumRows, NC = O::kSumVecs;
  constexpr std::int64_t L = O::kLanes;
  for (std::int64_t j0 = 0; j0 < i1; j0 += R) {
    float* yj = y + j0 * ldy;
    std::int64_t c = 0;
    for (; c + NC * L <= cols; c += NC * L) transposed_sum_tile<O, R, NC>(w, ldw, x + c, ldx, i0, i1, j0, yj + c, ldy);
    for (; c < cols; c += L) transposed_sum_tile<O, R, 1>(w, ldw, x + c, ldx, i0, i1, j0, yj + c, ldy);
  }
}

}  // namespace
}  // namespace ampkit::cpu
