// The skinny GEMM engine (kernels layer, internal): 1 <= min(m, n) <= kSkinnyMax (decode-like
// GEMMs and GEMV), templated over the ISA's vector vocabulary (src/cpu/simd/) with the engine's
// sizes added (kMaxCols: small columns per pass, kAccumulators, kRowBlock, kMr:
// gemm_skinny_f32_*.cpp). Included by gemm_skinny_f32_avx512.cpp and gemm_skinny_f32_avx2.cpp;
// the epilogue, the output rounding and the bias gradients are gemm_driver.hpp's (epilogue_tile,
// finish_bias_grad), not copies.
//
// Plan: the large operand W ("weights": op(A) when n is small, op(B)^T when m is small) is read
// once, straight from the caller's memory (no packing), widened to fp32 on the fly (the fp16 mode
// and the subnormal count included); the small operand S (k x ns, ns <= 16) is packed to fp32
// once. Work units are blocks of W rows times chunks of k, both sized from the shape alone
// (skinny_split), static schedule; every output is one fixed-order fp32 sum per k chunk, the
// chunks added in chunk order, so the bits do not depend on the thread count:
//   W contiguous along its rows ("axpy" form: op(A) = N, or op(B) = T): one FMA chain per output
//     in k order (k walked in blocks of kAxpyKb, the chain parked in an L1 buffer in between);
//   W contiguous along k ("dot" form: op(A) = T, or op(B) = N): L lane sums per output (lane l
//     takes kk = l mod L, each in k order; parked between k blocks), then Ops::sum's tree.
// BGRADA (n small) and BGRADB (m small) sum W itself: taken in the same pass (the values as given,
// before the fp16 mode), per block of kSumBlock k, the blocks added in double in k order as
// gemm_operand_sums does; the axpy form has its bits, the dot form sums each block in lanes.
#pragma once

#include <cstdint>
#include <cstring>

#include <immintrin.h>
#include <omp.h>

#include "cpu/gemm/gemm_driver.hpp"
#include "cpu/gemm/gemm_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kSkinnyMax = gemm_skinny_max;  // min(m, n) up to this (gemm_kernels.hpp)

constexpr std::int64_t kAxpyKb = 16, kDotRows = 32;         // see skinny_rows
constexpr std::int64_t kSumBlock = gemm_operand_sum_block;  // BGRADA/BGRADB sums of W, see skinny_rows

struct SkinnyMode {
  bool flush, alt;
};

// Scalar element kk of a run of dtype t, widened exactly.
static inline float load_scalar(const unsigned char* base, DType t, std::int64_t i) {
  std::uint16_t h;
  switch (t) {
    case DType::f32: {
      float f;
      std::memcpy(&f, base + i * 4, 4);
      return f;
    }
    case DType::bf16: std::memcpy(&h, base + i * 2, 2); return bf16_bits_to_float(h);
    case DType::f16:
    case DType::i32: break;  // i32: never a GEMM operand (gemm_validate)
  }
  std::memcpy(&h, base + i * 2, 2);
  return half_bits_to_float(h);
}

// Packs the small operand S(kk, s) = view element (s, kk), s < ns, as fp32 after the fp16 mode:
//   axpy form: dst[kk * cols + s];
//   dot form:  dst[(kk / L) * cols * L + s * L + kk % L] (the cols vectors of one k step adjacent:
//              one stream; a [s][kpad] layout put the cols streams 4 KiB-aliased in one L1 set);
// zeros for s >= ns and kk >= k.
// Returns the number of f16 subnormals read.
static std::int64_t pack_small(const OperandView& v, std::int64_t ns, std::int64_t k, std::int64_t cols,
                               std::int64_t kpad, std::int64_t lanes, bool dot, SkinnyMode mode, float* dst) {
  std::int64_t subnormals = 0;
  const std::size_t total = static_cast<std::size_t>(dot ? cols * kpad : k * cols);
  std::memset(dst, 0, total * sizeof(float));
  for (std::int64_t s = 0; s < ns; ++s) {
    for (std::int64_t kk = 0; kk < k; ++kk) {
      float x = load_scalar(v.base, v.dtype, s * v.r_stride + kk * v.k_stride);
      if (v.dtype == DType::f16) {
        const bool sub = gemm_math::is_f16_subnormal_input(x);
        subnormals += sub ? 1 : 0;
        x = gemm_math::fp16_mode_value(x, sub, mode.flush, mode.alt);
      }
      dst[dot ? (kk / lanes) * cols * lanes + s * lanes + kk % lanes : kk * cols + s] = x;
    }
  }
  return subnormals;
}

// One W element vector as the fp16 mode sees it (f16 only), subnormals counted.
template <class Ops, DType WT>
static inline typename Ops::V weights_mode(typename Ops::V x, SkinnyMode mode, std::int64_t& subnormals) {
  if constexpr (WT == DType::f16) return Ops::fp16_mode(x, mode.flush, mode.alt, subnormals);
  return x;
}

// Axpy form, one chunk of R vectors of rows over k in [k0, k1):
//   acc[s * acc_ld + r] (+)= sum_kk W(r, kk) * S(kk, s)   (r < R*L, s < NC; first: = instead)
// W(r, kk) at w[(r + kk * ldw) * size]; rows >= valid read as 0; S packed [k][s_ld].
// SUM: also sums[r] (+)= sum_kk W(r, kk) as given (before the fp16 mode), one fp32 chain per row
// in k order (sums_first: = instead): gemm_operand_sums' chain within one of its k blocks.
template <class Ops, DType WT, int NC, int R, bool SUM>
static void skinny_axpy(const unsigned char* w, std::int64_t ldw, std::int64_t valid, std::int64_t k0, std::int64_t k1,
                        std::int64_t k_total, const float* s, std::int64_t s_ld, SkinnyMode mode, bool first,
                        std::int64_t& subnormals, float* acc, std::int64_t acc_ld, float* sums, bool sums_first) {
  using Vec = typename Ops::V;
  constexpr std::int64_t L = Ops::kLanes;
  constexpr std::int64_t size = static_cast<std::int64_t>(sizeof(float)) / (WT == DType::f32 ? 1 : 2);
  typename Ops::Mask masks[R];
  Vec c[R][NC];
  [[maybe_unused]] Vec t[SUM ? R : 1];
#pragma GCC unroll 8
  for (int q = 0; q < R; ++q) {
    masks[q] = Ops::mask(valid - q * L);
    if constexpr (SUM) t[q] = sums_first ? Ops::zero() : Ops::load(sums + q * L);
#pragma GCC unroll 16
    for (int j = 0; j < NC; ++j) c[q][j] = first ? Ops::zero() : Ops::load(acc + j * acc_ld + q * L);
  }
  // Column runs are short (R * L elements), ldw apart: the hardware prefetcher does not follow,
  // so each line of the run kAhead columns ahead is prefetched, kAhead * R * NC = 512 FMAs
  // (~150 ns, a DRAM latency) ahead.
  constexpr std::int64_t kLines = (R * L * size + 63) / 64;
  constexpr std::int64_t kAxpyPrefetch = NC >= 16 ? 16 : 8;  // measured: 16 helps only 16 columns
  for (std::int64_t kk = k0; kk < k1; ++kk) {
    const unsigned char* col = w + kk * ldw * size;
    const float* srow = s + kk * s_ld;
    if (kk + kAxpyPrefetch < k_total && valid > 0) {
      const unsigned char* ahead = col + kAxpyPrefetch * ldw * size;
#pragma GCC unroll 8
      for (std::int64_t line = 0; line < kLines; ++line)
        _mm_prefetch(reinterpret_cast<const char*>(ahead + line * 64), _MM_HINT_T0);
    }
#pragma GCC unroll 8
    for (int q = 0; q < R; ++q) {
      const Vec raw = Ops::template load_masked<WT>(col + q * L * size, masks[q]);
      if constexpr (SUM) t[q] = Ops::add(t[q], raw);
      const Vec x = weights_mode<Ops, WT>(raw, mode, subnormals);
#pragma GCC unroll 16
      for (int j = 0; j < NC; ++j) c[q][j] = Ops::fmadd(x, Ops::set1(srow[j]), c[q][j]);
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < R; ++q) {
#pragma GCC unroll 16
    for (int j = 0; j < NC; ++j) Ops::store(acc + j * acc_ld + q * L, c[q][j]);
    if constexpr (SUM) Ops::store(sums + q * L, t[q]);
  }
}

// Dot form, one chunk of R rows over k in [k0, k1) (k0 a multiple of L):
//   lanes[(q * lanes_ld + j) * L + l] (+)= sum over kk = l mod L of W(q, kk) * S(kk, j)  (first: = instead)
// and when last: acc[j * acc_ld + q] = Ops::sum of those lanes. W(q, kk) at
// w[(kk + q * ldw) * size]; rows q >= valid give 0; S(kk, j) at s[(kk / L) * s_step + j * L + kk % L].
// SUM: also, for each block b of kSumBlock k within [k0, k1) (k0 a multiple of kSumBlock),
// sums[b * sums_ld + q] = the block's sum of W(q, kk) as given (before the fp16 mode), q < valid:
// L lane sums in k order (lane l takes kk = l mod L), then Ops::sum's tree (docs/GEMM.md).
template <class Ops, DType WT, int NC, int R, bool SUM>
static void skinny_dot(const unsigned char* w, std::int64_t ldw, std::int64_t valid, std::int64_t k0, std::int64_t k1,
                       const float* s, std::int64_t s_step, SkinnyMode mode, bool first, bool last,
                       std::int64_t& subnormals, float* lanes, std::int64_t lanes_ld, float* acc, std::int64_t acc_ld,
                       float* sums, std::int64_t sums_ld) {
  using Vec = typename Ops::V;
  constexpr std::int64_t L = Ops::kLanes;
  constexpr std::int64_t size = static_cast<std::int64_t>(sizeof(float)) / (WT == DType::f32 ? 1 : 2);
  Vec c[R][NC];
  [[maybe_unused]] Vec t[SUM ? R : 1];
  const unsigned char* rows[R];
#pragma GCC unroll 8
  for (int q = 0; q < R; ++q) {
    rows[q] = w + (q < valid ? q : 0) * ldw * size;
#pragma GCC unroll 16
    for (int j = 0; j < NC; ++j) c[q][j] = first ? Ops::zero() : Ops::load(lanes + (q * lanes_ld + j) * L);
  }
  // With NC >= 4 the k blocks are short (<= 1024) and 32 rows advance together: too many
  // streams for the hardware prefetcher, so each row is prefetched kDotAhead elements ahead
  // (past the block: the next block continues the row; past the row: the next row starts there).
  // 16 x 4096 x 4096: f32 15 -> 10-12 ms, bf16 12-14 -> 8-9 ms; with NC < 4 it cost 10-20 %.
  constexpr std::int64_t kDotAhead = 1024;
  const auto step = [&](std::int64_t kk, typename Ops::Mask m) __attribute__((always_inline)) {
    Vec x[R];
    if constexpr (NC >= 4) {
#pragma GCC unroll 8
      for (int q = 0; q < R; ++q)
        _mm_prefetch(reinterpret_cast<const char*>(rows[q] + (kk + kDotAhead) * size), _MM_HINT_T0);
    }
#pragma GCC unroll 8
    for (int q = 0; q < R; ++q) {
      const Vec raw = Ops::template load_masked<WT>(rows[q] + kk * size, q < valid ? m : Ops::mask(0));
      if constexpr (SUM) t[q] = Ops::add(t[q], raw);
      x[q] = weights_mode<Ops, WT>(raw, mode, subnormals);
    }
    const float* sk = s + (kk / L) * s_step;
#pragma GCC unroll 16
    for (int j = 0; j < NC; ++j) {
      const Vec sv = Ops::load(sk + j * L);
#pragma GCC unroll 8
      for (int q = 0; q < R; ++q) c[q][j] = Ops::fmadd(x[q], sv, c[q][j]);
    }
  };
  std::int64_t kk = k0;
  const typename Ops::Mask full = Ops::mask(L);
  while (kk < k1) {  // one pass without SUM; one pass per sum block with it
    const std::int64_t end = SUM ? imin(k1, (kk / kSumBlock + 1) * kSumBlock) : k1;
    if constexpr (SUM) {
#pragma GCC unroll 8
      for (int q = 0; q < R; ++q) t[q] = Ops::zero();
    }
    [[maybe_unused]] const std::int64_t block = kk / kSumBlock;
    for (; kk + L <= end; kk += L) step(kk, full);
    if (kk < end) {
      step(kk, Ops::mask(end - kk));
      kk = end;
    }
    if constexpr (SUM) {
#pragma GCC unroll 8
      for (int q = 0; q < R; ++q)
        if (q < valid) sums[block * sums_ld + q] = Ops::sum(t[q]);
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < R; ++q)
#pragma GCC unroll 16
    for (int j = 0; j < NC; ++j) {
      if (last)
        acc[j * acc_ld + q] = Ops::sum(c[q][j]);
      else
        Ops::store(lanes + (q * lanes_ld + j) * L, c[q][j]);
    }
}

// W rows [r0, r0 + span) x all small columns (in groups of NC <= Ops::kMaxCols), k in [kb, ke)
// (kb a multiple of kSumBlock), into acc[s * acc_ld + (r - r0)]; rows >= r0 + rows read as 0
// (span: rows rounded up to whole tiles). Subnormals of W are counted in the first group only.
// lanes: kDotRows * kSkinnyMax * L floats. (The lanes of chunk row q, group g, column j sit at
// ((q * cols) + g * NC + j) * L.) SUM (first group only): sums[b * sums_ld + (r - r0)] = the fp32
// sum of W row r over sum block b (kSumBlock k: b = kk / kSumBlock), W as given.
// Blocking keeps the reused data in L1: axpy walks k in blocks of kAxpyKb over every R-vector
// chunk of the span (each block reads kAxpyKb whole column runs of W, page by page); dot walks
// k in blocks whose packed S (NC x kb fp32) is 16 KiB, over kDotRows rows at a time, parking the
// lane sums in between. Neither changes the order of any sum.
struct SkinnyRange {
  std::int64_t r0, rows, span, kb, ke;
};

template <class Ops, DType WT, int NC, bool SUM>
static void skinny_rows(const OperandView& w, const SkinnyRange& range, std::int64_t groups, const float* s,
                        std::int64_t cols, SkinnyMode mode, std::int64_t& subnormals, float* lanes, float* acc,
                        std::int64_t acc_ld, float* sums, std::int64_t sums_ld) {
  constexpr int R = static_cast<int>(Ops::kAccumulators / NC < 8 ? Ops::kAccumulators / NC : 8);
  constexpr std::int64_t L = Ops::kLanes;
  const std::int64_t size = static_cast<std::int64_t>(dtype_size(WT));
  const std::int64_t r0 = range.r0, rows = range.rows, span = range.span, kb = range.kb, ke = range.ke;
  const std::int64_t k_stop = ke > kb ? ke : kb + 1;  // k = 0: one pass that only zeroes
  std::int64_t ignored = 0;
  // The column groups are the innermost loop: W's chunk is read from memory once, then from L1.
  if (w.r_stride != 1) {
    const std::int64_t kd = 4096 / cols;  // cols * kd * 4 bytes = 16 KiB of S (a multiple of kSumBlock)
    for (std::int64_t rb = 0; rb < span; rb += kDotRows) {
      const std::int64_t rb_end = rb + kDotRows < span ? rb + kDotRows : span;
      for (std::int64_t k0 = kb; k0 < k_stop; k0 += kd) {
        const std::int64_t k1 = k0 + kd < ke ? k0 + kd : ke;
        for (std::int64_t r = rb; r < rb_end; r += R)
          for (std::int64_t g = 0; g < groups; ++g) {
            const unsigned char* wr = w.base + (r0 + r) * w.r_stride * size;
            float* lr = lanes + ((r - rb) * cols + g * NC) * L;
            if (g == 0)
              skinny_dot<Ops, WT, NC, R, SUM>(wr, w.r_stride, rows - r, k0, k1, s, cols * L, mode, k0 == kb, k1 >= ke,
                                              subnormals, lr, cols, acc + r, acc_ld, sums + r, sums_ld);
            else
              skinny_dot<Ops, WT, NC, R, false>(wr, w.r_stride, rows - r, k0, k1, s + g * NC * L, cols * L, mode,
                                                k0 == kb, k1 >= ke, ignored, lr, cols, acc + g * NC * acc_ld + r,
                                                acc_ld, nullptr, 0);
          }
      }
    }
  } else {
    for (std::int64_t k0 = kb; k0 < k_stop; k0 += kAxpyKb) {
      const std::int64_t k1 = k0 + kAxpyKb < ke ? k0 + kAxpyKb : ke;
      float* block_sums = SUM ? sums + (k0 / kSumBlock) * sums_ld : nullptr;
      for (std::int64_t r = 0; r < span; r += R * L)
        for (std::int64_t g = 0; g < groups; ++g) {
          const unsigned char* wr = w.base + (r0 + r) * size;
          if (g == 0)
            skinny_axpy<Ops, WT, NC, R, SUM>(wr, w.k_stride, rows - r, k0, k1, ke, s, cols, mode, k0 == kb, subnormals,
                                             acc + r, acc_ld, SUM ? block_sums + r : nullptr, k0 % kSumBlock == 0);
          else
            skinny_axpy<Ops, WT, NC, R, false>(wr, w.k_stride, rows - r, k0, k1, ke, s + g * NC, cols, mode, k0 == kb,
                                               ignored, acc + g * NC * acc_ld + r, acc_ld, nullptr, false);
        }
    }
  }
}

using SkinnyRowsFn = void (*)(const OperandView&, const SkinnyRange&, std::int64_t, const float*, std::int64_t,
                              SkinnyMode, std::int64_t&, float*, float*, std::int64_t, float*, std::int64_t);

template <class Ops, DType WT, bool SUM>
static SkinnyRowsFn skinny_rows_for_cols(std::int64_t nc) {
  switch (nc) {
    case 1: return skinny_rows<Ops, WT, 1, SUM>;
    case 2: return skinny_rows<Ops, WT, 2, SUM>;
    case 4: return skinny_rows<Ops, WT, 4, SUM>;
    case 8: return skinny_rows<Ops, WT, 8, SUM>;
    default: return skinny_rows<Ops, WT, (Ops::kMaxCols < 16 ? Ops::kMaxCols : 16), SUM>;
  }
}

template <class Ops, DType WT>
static SkinnyRowsFn skinny_rows_for(std::int64_t nc, bool sums) {
  return sums ? skinny_rows_for_cols<Ops, WT, true>(nc) : skinny_rows_for_cols<Ops, WT, false>(nc);
}

// How the work is cut, from the shape and W's layout alone (never from the thread count, so the
// bits do not depend on it): W rows in blocks of rb (kRb; in the dot form halved down to
// kMinRowBlock while there are fewer than kWantUnits blocks), and, when there are still fewer, k
// in `chunks` chunks of `depth` (a multiple of kSumBlock, at least kMinChunk deep). Each k chunk's
// sums are fp32 partials in the engine's order within the chunk, added in fp32 in chunk order.
// The axpy form keeps whole kRb blocks: its column runs are rb elements long, and 128-row runs
// (512 B of f32, lda apart) left the prefetchers too little to follow (4096 x 1 x 4096 f32 at
// 1 thread on the 16-core Xeon: 2.8 -> 3.7 ms); it splits k instead.
struct SkinnySplit {
  std::int64_t rb, blocks, depth, chunks;
};

template <class Ops>
static SkinnySplit skinny_split(std::int64_t wrows, std::int64_t k, bool dot) {
  constexpr std::int64_t kWantUnits = 32, kMinRowBlock = 128, kMinChunk = 1024;
  static_assert(kMinRowBlock % Ops::kMr == 0, "row blocks of whole epilogue tiles");
  SkinnySplit sp{Ops::kRowBlock, 0, k, 1};
  while (dot && sp.rb > kMinRowBlock && ceil_div(wrows, sp.rb) < kWantUnits) sp.rb /= 2;
  sp.blocks = ceil_div(wrows, sp.rb);
  if (sp.blocks < kWantUnits && k >= 2 * kMinChunk) {
    const std::int64_t want = imin(ceil_div(kWantUnits, sp.blocks), k / kMinChunk);
    sp.depth = ceil_div(ceil_div(k, want), kSumBlock) * kSumBlock;
    sp.chunks = ceil_div(k, sp.depth);
  }
  return sp;
}

// The skinny driver for one activation type.
template <class Ops, class Act>
static void gemm_skinny_driver(const ops::GemmProblem& p, ops::GemmCounters& counters) {
  constexpr std::int64_t MR = Ops::kMr;
  const GemmArgs& a = p.args;
  const std::int64_t m = a.m, n = a.n, k = a.k;
  // by_rows: n small, W = op(A) (rows of D); else m small, W = op(B)^T (columns of D).
  const bool by_rows = n <= kSkinnyMax && (m > kSkinnyMax || n <= m);
  const OperandView w = by_rows ? view_of_a(a) : view_of_b(a);
  const OperandView sv = by_rows ? view_of_b(a) : view_of_a(a);
  const std::int64_t wrows = by_rows ? m : n, ns = by_rows ? n : m;
  std::int64_t cols = 1;  // ns rounded up to a power of two
  while (cols < ns) cols *= 2;
  const std::int64_t nc = cols < Ops::kMaxCols ? cols : Ops::kMaxCols;
  const std::int64_t groups = cols / nc;
  const bool dot = w.r_stride != 1;
  const std::int64_t kpad = (k + Ops::kLanes - 1) / Ops::kLanes * Ops::kLanes;
  const SkinnySplit split = skinny_split<Ops>(wrows, k, dot);
  const std::int64_t rb = split.rb, blocks = split.blocks, chunks = split.chunks;
  const std::int64_t units = blocks * chunks, wld = blocks * rb;  // wld: W rows padded to whole blocks
  const std::int64_t m_padded = ceil_div(m, MR) * MR;
  const bool row_sums = p.bias_grad == ops::GemmBiasGrad::rows_of_d;
  const std::int64_t parts = by_rows ? 1 : blocks;  // bias-gradient partials
  // BGRADA (n small) / BGRADB (m small) sum W: taken in the same pass over W, per sum block.
  const bool w_sums = k > 0 && ((by_rows && p.bias_grad == ops::GemmBiasGrad::rows_of_a) ||
                                (!by_rows && p.bias_grad == ops::GemmBiasGrad::cols_of_b));
  const std::int64_t sum_blocks = w_sums ? ceil_div(k, kSumBlock) : 0;

  const std::size_t s_bytes = align64(static_cast<std::size_t>(cols * (dot ? kpad : k) + 1) * 4);
  const std::size_t bias_bytes = p.has_bias ? align64(static_cast<std::size_t>(m_padded) * 4) : 0;
  const std::size_t grad_bytes = row_sums ? align64(static_cast<std::size_t>(parts * m_padded) * 4) : 0;
  const std::size_t totals_bytes = align64(static_cast<std::size_t>(m > n ? m : n) * 8);
  const std::size_t chunk_bytes = chunks > 1 ? align64(static_cast<std::size_t>(chunks * cols * wld) * 4) : 0;
  const std::size_t sums_bytes = align64(static_cast<std::size_t>(sum_blocks * wld) * 4);
  const std::size_t shared_bytes = s_bytes + bias_bytes + grad_bytes + totals_bytes + chunk_bytes + sums_bytes;
  const std::int64_t threads = imax(1, ampkit::num_threads());
  // Per thread: acc[s * rb + r] (sums of W rows r0 + r and small column s), the transposed tile
  // (m small), the parked lane sums (dot form).
  const std::size_t acc_bytes = static_cast<std::size_t>(kSkinnyMax * rb) * 4;
  const std::size_t tile_bytes = by_rows ? 0 : static_cast<std::size_t>(MR * rb) * 4;
  const std::size_t lanes_bytes = static_cast<std::size_t>(kDotRows * kSkinnyMax * Ops::kLanes) * 4;
  const std::size_t thread_bytes = acc_bytes + tile_bytes + lanes_bytes;
  unsigned char* ws =
      static_cast<unsigned char*>(gemm_workspace(shared_bytes + static_cast<std::size_t>(threads) * thread_bytes));
  unsigned char* scratch = ws + shared_bytes;
  float* small = reinterpret_cast<float*>(ws);
  float* bias = p.has_bias ? reinterpret_cast<float*>(ws + s_bytes) : nullptr;
  float* partials = row_sums ? reinterpret_cast<float*>(ws + s_bytes + bias_bytes) : nullptr;
  double* totals = reinterpret_cast<double*>(ws + s_bytes + bias_bytes + grad_bytes);
  // chunk_sums[(c * cols + s) * wld + r]: k chunk c's fp32 partial of W row r and small column s.
  float* chunk_sums = reinterpret_cast<float*>(ws + s_bytes + bias_bytes + grad_bytes + totals_bytes);
  // block_sums[b * wld + r]: the fp32 sum of W row r over sum block b.
  float* block_sums = reinterpret_cast<float*>(ws + s_bytes + bias_bytes + grad_bytes + totals_bytes + chunk_bytes);
  if (bias != nullptr) {
    Ops::load_row(a.epilogue.bias, a.epilogue.bias_dtype, m, bias);
    for (std::int64_t i = m; i < m_padded; ++i) bias[i] = 0.0f;
  }
  const SkinnyMode mode{p.flush, p.alt};
  const std::int64_t packed_subnormals = pack_small(sv, ns, k, cols, kpad, Ops::kLanes, dot, mode, small);

  SkinnyRowsFn run_rows = nullptr;
  switch (w.dtype) {
    case DType::f32: run_rows = skinny_rows_for<Ops, DType::f32>(nc, w_sums); break;
    case DType::bf16: run_rows = skinny_rows_for<Ops, DType::bf16>(nc, w_sums); break;
    case DType::f16: run_rows = skinny_rows_for<Ops, DType::f16>(nc, w_sums); break;
    case DType::i32: return;  // never a GEMM operand (gemm_validate)
  }
  const EpilogueContext ctx{&p, bias, partials, m_padded};
  const bool parallel = threads > 1 && units > 1 && m * n * imax(k, 16) >= (1 << 18);
  // The epilogue of one block from acc (leading dimension rb).
  const auto finish_block = [&](std::int64_t blk, float* acc, float* tile, std::int64_t& sub_out) {
    const std::int64_t r0 = blk * rb, rows = imin(rb, wrows - r0);
    if (by_rows) {
      // acc is D's rows [r0, r0 + rows) x all n columns, leading dimension rb.
      for (std::int64_t i = 0; i < rows; i += MR)
        epilogue_tile<Ops, Act>(ctx, acc + i, rb, r0 + i, 0, imin(MR, rows - i), n, 0, sub_out);
    } else {
      // Transposed into an MR x rows tile of D (rows >= m of the tile are zero, never stored).
      for (std::int64_t j = 0; j < rows; ++j) {
        for (std::int64_t i = 0; i < m; ++i) tile[j * MR + i] = acc[i * rb + j];
        for (std::int64_t i = m; i < MR; ++i) tile[j * MR + i] = 0.0f;
      }
      epilogue_tile<Ops, Act>(ctx, tile, MR, 0, r0, m, rows, blk, sub_out);
    }
  };
  // The work of one team member (the worksharing loops split it when a team runs them); a call
  // that runs on one thread enters no parallel region.
  const auto work = [&](std::int64_t& sub_in, std::int64_t& sub_out) {
    unsigned char* mine = scratch + static_cast<std::size_t>(parallel ? omp_get_thread_num() : 0) * thread_bytes;
    float* acc = reinterpret_cast<float*>(mine);
    float* tile = reinterpret_cast<float*>(mine + acc_bytes);
    float* lanes = reinterpret_cast<float*>(mine + acc_bytes + tile_bytes);
#pragma omp for schedule(static)
    for (std::int64_t u = 0; u < units; ++u) {
      const std::int64_t blk = u / chunks, c = u % chunks;
      const std::int64_t r0 = blk * rb, rows = imin(rb, wrows - r0);
      const std::int64_t rows_up = ceil_div(rows, MR) * MR;
      const SkinnyRange range{r0, rows, rows_up < rb ? rows_up : rb, c * split.depth, imin(k, (c + 1) * split.depth)};
      float* out = chunks > 1 ? chunk_sums + c * cols * wld + r0 : acc;
      run_rows(w, range, groups, small, cols, mode, sub_in, lanes, out, chunks > 1 ? wld : rb, block_sums + r0, wld);
      if (chunks == 1) finish_block(blk, acc, tile, sub_out);
    }
    if (chunks > 1) {
      // The k chunks of each block added in chunk order, then its epilogue.
#pragma omp for schedule(static)
      for (std::int64_t blk = 0; blk < blocks; ++blk) {
        const std::int64_t r0 = blk * rb, rows_up = ceil_div(imin(rb, wrows - r0), MR) * MR;
        for (std::int64_t s = 0; s < ns; ++s) {
          float* x = acc + s * rb;
          std::memcpy(x, chunk_sums + s * wld + r0, static_cast<std::size_t>(rows_up) * 4);
          for (std::int64_t c = 1; c < chunks; ++c) {
            const float* part = chunk_sums + (c * cols + s) * wld + r0;
#pragma omp simd
            for (std::int64_t r = 0; r < rows_up; ++r) x[r] += part[r];
          }
        }
        finish_block(blk, acc, tile, sub_out);
      }
    }
  };
  std::int64_t sub_in = packed_subnormals, sub_out = 0;
  if (parallel) {
#pragma omp parallel num_threads(static_cast <int>(threads)) reduction(+ : sub_in, sub_out)
    work(sub_in, sub_out);
  } else {
    work(sub_in, sub_out);
  }
  counters.fp16_subnormal_inputs += sub_in;
  counters.fp16_subnormal_outputs += sub_out;
  if (w_sums) {
    // gemm_operand_sums' combination: the fp32 block sums added in double in k order.
    for (std::int64_t r = 0; r < wrows; ++r) {
      double total = 0.0;
      for (std::int64_t b = 0; b < sum_blocks; ++b) total += block_sums[b * wld + r];
      totals[r] = total;
    }
  }
  finish_bias_grad(p, partials, parts, m_padded, totals, w_sums);
}

template <class Ops>
struct SkinnyEngine {
  template <class Act>
  static void run(const ops::GemmProblem& p, ops::GemmCounters& counters) {
    gemm_skinny_driver<Ops, Act>(p, counters);
  }
};

}  // namespace
}  // namespace ampkit::cpu
