// Row helpers shared by the norm ISA kernels (kernels layer, internal): the vector walk over a
// row, row addressing, the parallel threshold. Templates over an `Ops` struct
// (Avx512Ops / Avx2Ops, src/cpu/simd/); included by the *_avx512.cpp / *_avx2.cpp norm
// files only, everything with internal linkage.
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"
#include "ampkit/device/cpu.hpp"

namespace ampkit::cpu {
namespace {

/// Below this many elements (rows * n) a call runs on the calling thread: opening an OpenMP
/// region costs microseconds, more than the whole call for small shapes.
constexpr std::int64_t kNormParallelMinElements = std::int64_t{1} << 16;

/// Rows of at most kNormShortRow elements are processed kNormRowGroup at a time, each stage for
/// all rows of the group before the next, so that their latency chains overlap.
constexpr std::int64_t kNormShortRow = 64;
constexpr int kNormRowGroup = 4;

/// y (forward) and dx (backward) tensors of at least this many bytes are written with
/// non-temporal stores (long rows): the size of the whole L3 (cpu_features().caches; the L2 where
/// there is none). A tensor that large is not found in the caches by its reader anyway, and the
/// stores skip the read for ownership. AMPKIT_CACHES=l3=... moves it, which is how the bench
/// compares the two (docs/perf-log/2026-12-02-norms-ceiling-per-footprint.md).
inline std::int64_t norm_stream_min_bytes() {
  const CpuCaches& c = cpu_features().caches;
  return c.l3 > 0 ? c.l3 : c.l2;
}

/// Rows of at most kNormAcrossVectors vectors go Ops::kLanes at a time with rows across lanes
/// (the statistics of row q in lane q); this takes precedence over the row groups above.
constexpr int kNormAcrossVectors = 4;

/// Calls step(slot, i, count) over the row [0, n) in vectors of Ops::kLanes: full vectors in
/// pairs (slots 0 and 1, two independent accumulator chains), then one more full vector (slot 0),
/// then the tail (slot 1, count < kLanes). The order is fixed, so sums are reproducible.
template <class Ops, class Step>
[[gnu::always_inline]] inline void for_row(std::int64_t n, Step&& step) {
  constexpr std::int64_t kL = Ops::kLanes;
  std::int64_t i = 0;
  for (; i + 2 * kL <= n; i += 2 * kL) {
    step(0, i, kL);
    step(1, i + kL, kL);
  }
  if (i + kL <= n) {
    step(0, i, kL);
    i += kL;
  }
  if (i < n) step(1, i, n - i);
}

/// Calls body(q) for q = 0 .. Ops::kLanes - 1 (the rows of a group with rows across lanes).
/// Rows of one vector (kV = 1) are unrolled so their vectors stay in registers; longer rows are
/// not: the loop body is long enough, and unrolling 16 rows x 4 vectors x every dtype mix took
/// minutes to compile.
template <class Ops, int kV, class Body>
[[gnu::always_inline]] inline void for_rows_across(Body&& body) {
  if constexpr (kV == 1) {
#pragma GCC unroll 16
    for (int q = 0; q < static_cast<int>(Ops::kLanes); ++q) body(q);
  } else {
#pragma GCC unroll 1
    for (int q = 0; q < static_cast<int>(Ops::kLanes); ++q) body(q);
  }
}

/// Row r of a [rows, n] operand of dtype T.
template <DType T>
inline const void* row_ptr(const void* base, std::int64_t r, std::int64_t n) {
  return static_cast<const char*>(base) + r * n * static_cast<std::int64_t>(dtype_size(T));
}
template <DType T>
inline void* row_ptr(void* base, std::int64_t r, std::int64_t n) {
  return static_cast<char*>(base) + r * n * static_cast<std::int64_t>(dtype_size(T));
}

inline std::int64_t min_i64(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

}  // namespace
}  // namespace ampkit::cpu
