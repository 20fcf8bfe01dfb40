// The one GEMM driver (kernels layer, internal), templated over the micro-kernel traits of an
// ISA and over the activation of the epilogue. Included only by the engine translation units
// (gemm_engine_*.cpp), each compiling its own copy with its ISA's flags: everything here has
// internal linkage (unnamed namespace), so no weak symbol is shared between ISAs.
//
// Plan (ruy/BLIS style; every output element is one fixed-order fp32 sum over k):
//   1. pack op(A) into MR-row slivers and op(B) into NR-column slivers (all of them, in
//      parallel; dtype conversion and the fp16 mode happen here, f16 subnormals are counted);
//   2. parallel over blocks of (MC rows x NC columns) of D: for each k block (kc deep), for each
//      NR sliver of B, for each MR sliver of A: the micro-kernel continues the MR x NR fp32 tile
//      over the block (the sums parked in memory between blocks, reloaded exactly); after the
//      last block the epilogue (alpha, beta C, bias, aux, activation, bias-gradient partials,
//      rounding) runs on that tile before the one store to D. Block sizes: gemm_blocking.hpp;
//   3. bias gradients: per-sliver fp32 partials combined in double in sliver order.
// Traits (see gemm_ukernel_f32_avx512.cpp): Packed (float or uint16_t bf16 bits), kMr, kNr,
// kPairs (bf16: k packed in pairs), ukernel_part(kc, a, b, tile, accumulate) (the tile over kc
// more k steps: continued from tile when accumulate, else from zero; kc = 0 zeroes it),
// load_row, store_row; optional (gemm_ukernel_bf16_32x32_amx.cpp): kKStep (k zero-padded to a
// multiple of it; k blocks are multiples of it too), kBKGroup (B packed k-contiguous in groups
// of kBKGroup per column instead of like A), prepare_thread() (run by every thread before its
// first micro-kernel of a call), transpose_k_group (one k group of a bf16 operand contiguous
// along rows into its k-runs, see pack_sliver), kParkedTilesInL3 (gemm_blocking.hpp's
// tiles_in_l3; gemm_ukernel_f32_avx512.cpp).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include <omp.h>

#include "ampkit/core/float16.hpp"
#include "ampkit/core/threading.hpp"
#include "cpu/gemm/gemm_blocking.hpp"
#include "cpu/gemm/gemm_epilogue.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_output.hpp"
#include "cpu/math/fp16_mode_math.hpp"
#include "cpu/math/gelu_math.hpp"

namespace ampkit::cpu {
namespace {

static inline std::int64_t imin(std::int64_t a, std::int64_t b) { return a < b ? a : b; }
static inline std::int64_t imax(std::int64_t a, std::int64_t b) { return a > b ? a : b; }
static inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
static inline std::size_t align64(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

// An operand as a rows x k matrix: element (r, kk) at base[r * r_stride + kk * k_stride];
// one of the strides is 1. op(A) is m x k; op(B) is seen transposed, n x k.
struct OperandView {
  const unsigned char* base;
  DType dtype;
  std::int64_t r_stride, k_stride;
};

static inline OperandView view_of_a(const GemmArgs& a) {
  return {static_cast<const unsigned char*>(a.a), a.a_dtype, a.op_a == Op::N ? 1 : a.lda, a.op_a == Op::N ? a.lda : 1};
}
static inline OperandView view_of_b(const GemmArgs& a) {
  return {static_cast<const unsigned char*>(a.b), a.b_dtype, a.op_b == Op::N ? a.ldb : 1, a.op_b == Op::N ? 1 : a.ldb};
}

// The fp16 mode on a block of widened f16 values: count subnormals, flush or round to bf16.
static inline std::int64_t apply_fp16_mode(float* v, std::int64_t count, bool flush, bool alt) {
  std::int64_t subnormals = 0;
#pragma omp simd reduction(+ : subnormals)
  for (std::int64_t i = 0; i < count; ++i) {
    const bool sub = gemm_math::is_f16_subnormal_input(v[i]);
    subnormals += sub ? 1 : 0;
    v[i] = gemm_math::fp16_mode_value(v[i], sub, flush, alt);
  }
  return subnormals;
}

// n <= 256 f16 values at src rounded to bf16 under alt (the bits of round_to_bf16 on the exact
// fp32 value: RNE, NaN kept quiet; every f16 value, subnormals included, is a normal fp32, so
// nothing is flushed), f16 subnormals counted. T::load_row widens with vcvtph2ps; the rest is
// integer work that `omp simd` vectorizes (no vcvtneps2bf16: not in every engine's ISA).
template <class T>
static inline std::int64_t f16_run_to_bf16(const unsigned char* src, std::int64_t n, std::uint16_t* out) {
  alignas(64) float wide[256];
  T::load_row(src, DType::f16, n, wide);
  std::int64_t subnormals = 0;
#pragma omp simd reduction(+ : subnormals)
  for (std::int64_t i = 0; i < n; ++i) {
    subnormals += gemm_math::is_f16_subnormal_input(wide[i]) ? 1 : 0;
    out[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(gemm_math::round_to_bf16(wide[i])) >> 16);
  }
  return subnormals;
}

// The optional traits with their defaults (see the top of this file).
template <class T>
constexpr std::int64_t k_step() {
  if constexpr (requires { T::kKStep; }) return T::kKStep;
  return T::kPairs ? 2 : 1;
}
template <class T>
constexpr int b_k_group() {
  if constexpr (requires { T::kBKGroup; }) return T::kBKGroup;
  return 0;
}
template <class T>
constexpr bool parked_tiles_in_l3() {
  if constexpr (requires { T::kParkedTilesInL3; }) return T::kParkedTilesInL3;
  return false;
}

// Brings a parked fp32 tile (MR x NR) into L1 ahead of the micro-kernel call that reloads it.
template <class T>
static inline void prefetch_tile(const float* tile) {
  const char* bytes = reinterpret_cast<const char*>(tile);
  for (std::int64_t at = 0; at < T::kMr * T::kNr * 4; at += 64) __builtin_prefetch(bytes + at, 0, 3);
}

// Packs rows [r0, r0 + rows) (rows <= R) of an operand into one sliver, zero-padded to R rows
// and to kp (a multiple of k_step<T>() >= k) along k:
//   KGroup = 0, kPairs = false: dst[kk * R + r] (float)
//   KGroup = 0, kPairs = true:  dst[(kk / 2) * 2R + 2r + kk % 2] (bf16 bits)
//   KGroup = G > 0:             dst[(kk / G) * GR + r * G + kk % G] (bf16 bits, k contiguous)
// Returns the number of f16 subnormal elements read.
// sums (only with KGroup > 0, a bf16 operand contiguous along rows: see can_sum_while_packing):
// sums[r] (r < rows) = gemm_operand_sums' sum of row r0 + r, the same blocks in the same order.
template <class T, int R, int KGroup = 0>
static std::int64_t pack_sliver(const OperandView& v, std::int64_t r0, std::int64_t rows, std::int64_t k,
                                std::int64_t kp, bool flush, bool alt, typename T::Packed* dst,
                                double* sums = nullptr) {
  constexpr std::int64_t kKb = 64;  // k block staged as fp32
  static_assert(KGroup == 0 || (T::kPairs && kKb % KGroup == 0), "k groups of bf16 within a staged block");
  alignas(64) float block[kKb * R];
  alignas(64) float line[kKb];
  const std::int64_t esize = static_cast<std::int64_t>(dtype_size(v.dtype));
  std::int64_t subnormals = 0;
  // Both bf16 layouts keep k steps [s, s + step) within dst[s * R, (s + step) * R): zero the
  // last partial step first, the loop below overwrites what lies below k.
  constexpr std::int64_t step = k_step<T>();
  if (kp > k / step * step)
    std::memset(dst + k / step * step * R, 0, static_cast<std::size_t>((kp - k / step * step) * R) * sizeof(*dst));
  if constexpr (KGroup > 0) {
    // bf16 already contiguous along k: the k-runs are copied as they are (rows >= `rows` stay
    // zero from a full clear; nothing to convert or count).
    if (v.dtype == DType::bf16 && v.k_stride == 1) {
      if (rows < R) std::memset(dst, 0, static_cast<std::size_t>(kp * R) * sizeof(*dst));
      const auto* src = reinterpret_cast<const std::uint16_t*>(v.base);
      const std::int64_t whole = k / KGroup * KGroup;
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::uint16_t* run = src + (r0 + r) * v.r_stride;
        // Whole groups with a constant size (inlined: a call per 64 bytes cost 40 % of
        // (128, 768, 768)), then the tail.
        for (std::int64_t g = 0; g < whole; g += KGroup)
          std::memcpy(dst + g * R + r * KGroup, run + g, KGroup * sizeof(std::uint16_t));
        if (whole < k)
          std::memcpy(dst + whole * R + r * KGroup, run + whole,
                      static_cast<std::size_t>(k - whole) * sizeof(std::uint16_t));
      }
      return 0;
    }
    // bf16 contiguous along rows (op(B) transposed: the dW GEMM of Linear): each k row-run is
    // spread over the k-runs of its rows, in blocks of gemm_operand_sum_block k (a multiple of
    // KGroup) whose fp32 row sums are taken on the way when asked for.
    if (v.dtype == DType::bf16 && v.r_stride == 1) {
      static_assert(gemm_operand_sum_block % KGroup == 0, "sum blocks of whole k groups");
      if (rows < R) std::memset(dst, 0, static_cast<std::size_t>(kp * R) * sizeof(*dst));
      const auto* src = reinterpret_cast<const std::uint16_t*>(v.base) + r0;
      alignas(64) double total[R] = {};
      for (std::int64_t k0 = 0; k0 < k; k0 += gemm_operand_sum_block) {
        const std::int64_t k1 = imin(k, k0 + gemm_operand_sum_block);
        alignas(64) float part[R] = {};  // fp32 sums of this k block, k in order
        if constexpr (requires { T::transpose_k_group(src, v.k_stride, rows, k, dst, part); }) {
          for (std::int64_t g = k0; g < k1; g += KGroup)  // the traits' vector transpose, a group at a time
            T::transpose_k_group(src + g * v.k_stride, v.k_stride, rows, imin(KGroup, k1 - g), dst + g * R,
                                 sums != nullptr ? part : nullptr);
        } else {
          for (std::int64_t kk = k0; kk < k1; ++kk) {
            const std::uint16_t* run = src + kk * v.k_stride;
            std::uint16_t* out = dst + kk / KGroup * KGroup * R + kk % KGroup;
            for (std::int64_t r = 0; r < rows; ++r) out[r * KGroup] = run[r];
            if (sums != nullptr) {
#pragma omp simd
              for (std::int64_t r = 0; r < rows; ++r)
                part[r] += std::bit_cast<float>(static_cast<std::uint32_t>(run[r]) << 16);
            }
          }
        }
        for (std::int64_t r = 0; r < R; ++r) total[r] += part[r];
      }
      if (sums != nullptr)
        for (std::int64_t r = 0; r < rows; ++r) sums[r] = total[r];
      return 0;
    }
  } else if constexpr (T::kPairs) {
    // bf16 already contiguous along rows: k pairs interleaved straight from two row-runs.
    if (v.dtype == DType::bf16 && v.r_stride == 1) {
      const auto* src = reinterpret_cast<const std::uint16_t*>(v.base);
      for (std::int64_t kk = 0; kk < k; kk += 2) {
        const std::uint16_t* even = src + r0 + kk * v.k_stride;
        const std::uint16_t* odd = kk + 1 < k ? even + v.k_stride : nullptr;
        std::uint16_t* out = dst + kk * R;
#pragma omp simd
        for (std::int64_t r = 0; r < rows; ++r) {
          out[2 * r] = even[r];
          out[2 * r + 1] = odd != nullptr ? odd[r] : std::uint16_t{0};
        }
        for (std::int64_t r = rows; r < R; ++r) out[2 * r] = out[2 * r + 1] = 0;
      }
      return 0;
    }
    // bf16 contiguous along k (op(A) transposed: Linear's forward GEMM, W [out, in]): a k pair of
    // a row is one 32-bit word of its k-run, moved to the row's slot of the pair row; an odd last
    // k gets a zero partner (rows >= `rows` and k >= k stay zero from the clears).
    if (v.dtype == DType::bf16 && v.k_stride == 1) {
      if (rows < R) std::memset(dst, 0, static_cast<std::size_t>(kp * R) * sizeof(*dst));
      const auto* src = reinterpret_cast<const std::uint16_t*>(v.base);
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::uint16_t* run = src + (r0 + r) * v.r_stride;
        std::uint16_t* out = dst + 2 * r;
        for (std::int64_t q = 0; q < k / 2; ++q) std::memcpy(out + q * 2 * R, run + 2 * q, 2 * sizeof(std::uint16_t));
        if (k % 2 != 0) {
          out[(k - 1) * R] = run[k - 1];
          out[(k - 1) * R + 1] = 0;
        }
      }
      return 0;
    }
  }
  if constexpr (T::kPairs) {
    // f16 under alt (the bf16 engines): each block of kAltKb k is rounded to bf16 into a staging
    // block of the operand's own orientation, then packed by the bf16 paths above. Same bits as
    // the fp32-staged loop below (the same rounding of the same values), a fraction of its work.
    if (v.dtype == DType::f16 && alt) {
      constexpr std::int64_t kAltKb = 256;
      static_assert(kAltKb % step == 0 && (KGroup == 0 || kAltKb % KGroup == 0), "staging blocks of whole k steps");
      alignas(64) std::uint16_t staged[kAltKb * R];
      const bool along_rows = v.r_stride == 1;
      const OperandView sv{reinterpret_cast<const unsigned char*>(staged), DType::bf16, along_rows ? 1 : kAltKb,
                           along_rows ? R : 1};
      for (std::int64_t k0 = 0; k0 < k; k0 += kAltKb) {
        const std::int64_t kb = imin(kAltKb, k - k0);
        if (along_rows) {  // staged[kk * R + r]
          for (std::int64_t kk = 0; kk < kb; ++kk)
            subnormals += f16_run_to_bf16<T>(v.base + (r0 + (k0 + kk) * v.k_stride) * esize, rows, staged + kk * R);
        } else {  // staged[r * kAltKb + kk]
          for (std::int64_t r = 0; r < rows; ++r)
            subnormals += f16_run_to_bf16<T>(v.base + ((r0 + r) * v.r_stride + k0) * esize, kb, staged + r * kAltKb);
        }
        pack_sliver<T, R, KGroup>(sv, 0, rows, kb, k0 + kAltKb < k ? kAltKb : kp - k0, false, false, dst + k0 * R);
      }
      return subnormals;
    }
  }
  for (std::int64_t k0 = 0; k0 < k; k0 += kKb) {
    const std::int64_t kb = imin(kKb, k - k0);
    if (v.r_stride == 1) {  // contiguous along rows: one row-run per kk
      for (std::int64_t kk = 0; kk < kb; ++kk) {
        float* out = block + kk * R;
        T::load_row(v.base + (r0 + (k0 + kk) * v.k_stride) * esize, v.dtype, rows, out);
        for (std::int64_t r = rows; r < R; ++r) out[r] = 0.0f;
      }
    } else {  // contiguous along k: one k-run per row, transposed into the block
      for (std::int64_t r = 0; r < rows; ++r) {
        T::load_row(v.base + ((r0 + r) * v.r_stride + k0) * esize, v.dtype, kb, line);
        for (std::int64_t kk = 0; kk < kb; ++kk) block[kk * R + r] = line[kk];
      }
      for (std::int64_t kk = 0; kk < kb; ++kk)
        for (std::int64_t r = rows; r < R; ++r) block[kk * R + r] = 0.0f;
    }
    if (v.dtype == DType::f16) subnormals += apply_fp16_mode(block, kb * R, flush, alt);
    if constexpr (!T::kPairs) {
      std::memcpy(dst + k0 * R, block, static_cast<std::size_t>(kb * R) * sizeof(float));
    } else if constexpr (KGroup > 0) {
      // Values are exactly bf16 here (see below): keep the top halves, transposed to k-runs.
      for (std::int64_t g = 0; g < kb; g += KGroup) {
        const std::int64_t run = imin(KGroup, kb - g);
        std::uint16_t* out = dst + (k0 + g) * R;
        for (std::int64_t r = 0; r < R; ++r)
          for (std::int64_t t = 0; t < run; ++t)
            out[r * KGroup + t] =
                static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(block[(g + t) * R + r]) >> 16);
      }
    } else {
      // Values are exactly bf16 here (bf16 operands or f16 rounded by alt): keep the top halves,
      // k pairs interleaved: pair word r = (bits of k0 + kk + 1, row r) high | (k0 + kk, row r) low.
      // An odd last kk gets a zero partner. (kKb is even, so pairs never straddle blocks.)
      alignas(64) std::uint32_t pairs[R];
      for (std::int64_t kk = 0; kk < kb; kk += 2) {
        const float* even = block + kk * R;
        const float* odd = kk + 1 < kb ? even + R : nullptr;
#pragma omp simd
        for (std::int64_t r = 0; r < R; ++r) {
          const std::uint32_t lo = std::bit_cast<std::uint32_t>(even[r]) >> 16;
          const std::uint32_t hi = odd != nullptr ? std::bit_cast<std::uint32_t>(odd[r]) & 0xffff0000u : 0u;
          pairs[r] = hi | lo;
        }
        std::memcpy(dst + (k0 + kk) * R, pairs, sizeof(pairs));
      }
    }
  }
  return subnormals;
}

// Whether pack_sliver<T, R, b_k_group<T>()> can take the BGRADB sums of op(B) while packing it.
template <class T>
static bool can_sum_while_packing(const ops::GemmProblem& p, const OperandView& vb) {
  // (k_stride == 1 as well, for one row or one k, takes the k-contiguous path, which sums nothing.)
  return b_k_group<T>() > 0 && p.bias_grad == ops::GemmBiasGrad::cols_of_b && vb.dtype == DType::bf16 &&
         vb.r_stride == 1 && vb.k_stride != 1;
}

// Bias gradients after the tiles: rows_of_d sums the per-sliver partials[js][i] (js < parts,
// row stride m_padded) in double in js order; BGRADA/BGRADB sum the operands
// (gemm_operand_sums, unless the packing took them: totals_ready). totals: scratch of max(m, n)
// doubles.
static void finish_bias_grad(const ops::GemmProblem& p, const float* partials, std::int64_t parts,
                             std::int64_t m_padded, double* totals, bool totals_ready = false) {
  if (p.bias_grad == ops::GemmBiasGrad::none) return;
  const std::int64_t m = p.args.m;
  if (p.bias_grad == ops::GemmBiasGrad::rows_of_d) {
    for (std::int64_t i = 0; i < m; ++i) totals[i] = 0.0;
    for (std::int64_t js = 0; js < parts; ++js) {
      const float* row = partials + js * m_padded;
      for (std::int64_t i = 0; i < m; ++i) totals[i] += row[i];
    }
  } else if (!totals_ready) {
    gemm_operand_sums(p, totals);
  }
  gemm_write_bias_grad(p, totals, p.bias_grad == ops::GemmBiasGrad::cols_of_b ? p.args.n : m);
}

// The driver for one activation type.
template <class T, class Act>
static void gemm_driver(const ops::GemmProblem& p, ops::GemmCounters& counters) {
  using Packed = typename T::Packed;
  constexpr std::int64_t MR = T::kMr, NR = T::kNr;
  const GemmArgs& a = p.args;
  const std::int64_t m = a.m, n = a.n, k = a.k;
  const std::int64_t kp = ceil_div(k, k_step<T>()) * k_step<T>();
  const std::int64_t m_slivers = ceil_div(m, MR), n_slivers = ceil_div(n, NR);
  const std::int64_t m_padded = m_slivers * MR;
  const bool row_sums = p.bias_grad == ops::GemmBiasGrad::rows_of_d;

  // Blocking from the caches (gemm_blocking.cpp): k in blocks of <= kc, an MC x kc block of packed A
  // in L2 while the NC slivers of B pass, each B sliver's kc part in L1 while the A slivers of
  // the block pass. Blocks are split further until every thread has several.
  const std::int64_t threads = imax(1, ampkit::num_threads());
  constexpr std::int64_t kStep = k_step<T>();
  const GemmBlocking blocking =
      gemm_blocking({MR, NR, static_cast<std::int64_t>(sizeof(Packed)), kStep, parked_tiles_in_l3<T>()},
                    {p.forced_kc, p.forced_mc, p.forced_nc});
  // k blocks of equal depth (in k steps; block b starts at k_start(b)), none deeper than kc.
  const std::int64_t k_blocks = imax(1, ceil_div(kp, blocking.kc));
  const bool k_blocked = k_blocks > 1;
  const auto k_start = [&](std::int64_t b) { return kStep * (b * (kp / kStep) / k_blocks); };
  std::int64_t mc = imin(blocking.mc, imax(1, m_slivers));  // in A slivers
  std::int64_t nc = imin(blocking.nc, imax(1, n_slivers));  // in B slivers
  const bool parallel = threads > 1 && m * n * imax(k, 16) >= (1 << 18);
  const std::int64_t want_units = parallel ? 4 * threads : 1;
  while (nc > 1 && ceil_div(m_slivers, mc) * ceil_div(n_slivers, nc) < want_units) nc = (nc + 1) / 2;
  while (mc > 1 && ceil_div(m_slivers, mc) * ceil_div(n_slivers, nc) < want_units) mc = (mc + 1) / 2;
  const std::int64_t m_blocks = ceil_div(m_slivers, mc), n_blocks = ceil_div(n_slivers, nc);
  const std::int64_t units = m_blocks * n_blocks;

  // Workspace: packed A, packed B, fp32 bias, bias-gradient partials, parked sums (k-blocked).
  const std::size_t parked_per_thread = static_cast<std::size_t>(mc * nc * MR * NR);
  const std::size_t parked_bytes = k_blocked ? align64(static_cast<std::size_t>(threads) * parked_per_thread * 4) : 0;
  const std::size_t a_bytes = align64(static_cast<std::size_t>(m_slivers * MR * kp) * sizeof(Packed));
  const std::size_t b_bytes = align64(static_cast<std::size_t>(n_slivers * NR * kp) * sizeof(Packed));
  const std::size_t bias_bytes = p.has_bias ? align64(static_cast<std::size_t>(m_padded) * 4) : 0;
  const std::size_t grad_bytes = row_sums ? align64(static_cast<std::size_t>(n_slivers * m_padded) * 4) : 0;
  const std::int64_t grad_length = p.bias_grad == ops::GemmBiasGrad::cols_of_b ? n : m;
  const std::size_t totals_bytes =
      p.bias_grad != ops::GemmBiasGrad::none ? align64(static_cast<std::size_t>(grad_length) * 8) : 0;
  unsigned char* ws = static_cast<unsigned char*>(
      gemm_workspace(a_bytes + b_bytes + bias_bytes + grad_bytes + totals_bytes + parked_bytes + 64));
  Packed* packed_a = reinterpret_cast<Packed*>(ws);
  Packed* packed_b = reinterpret_cast<Packed*>(ws + a_bytes);
  float* bias = p.has_bias ? reinterpret_cast<float*>(ws + a_bytes + b_bytes) : nullptr;
  float* partials = row_sums ? reinterpret_cast<float*>(ws + a_bytes + b_bytes + bias_bytes) : nullptr;
  float* parked =
      k_blocked ? reinterpret_cast<float*>(ws + a_bytes + b_bytes + bias_bytes + grad_bytes + totals_bytes) : nullptr;
  if (bias != nullptr) {
    T::load_row(a.epilogue.bias, a.epilogue.bias_dtype, m, bias);
    for (std::int64_t i = m; i < m_padded; ++i) bias[i] = 0.0f;
  }

  const OperandView va = view_of_a(a), vb = view_of_b(a);
  const EpilogueContext ctx{&p, bias, partials, m_padded};
  double* totals = reinterpret_cast<double*>(ws + a_bytes + b_bytes + bias_bytes + grad_bytes);
  const bool b_sums = can_sum_while_packing<T>(p, vb);
  // The work of one team member; the worksharing loops split it when a team runs them. A call
  // that runs on one thread enters no parallel region (it costs more than an 8x8x8 GEMM).
  const auto work = [&](std::int64_t& sub_in, std::int64_t& sub_out) {
#pragma omp for schedule(static)
    for (std::int64_t s = 0; s < m_slivers + n_slivers; ++s) {
      if (s < m_slivers) {
        sub_in += pack_sliver<T, MR>(va, s * MR, imin(MR, m - s * MR), k, kp, p.flush, p.alt, packed_a + s * MR * kp);
      } else {
        const std::int64_t t = s - m_slivers;
        sub_in += pack_sliver<T, NR, b_k_group<T>()>(vb, t * NR, imin(NR, n - t * NR), k, kp, p.flush, p.alt,
                                                     packed_b + t * NR * kp, b_sums ? totals + t * NR : nullptr);
      }
    }
    if constexpr (requires { T::prepare_thread(); }) T::prepare_thread();
#pragma omp for schedule(static)
    for (std::int64_t u = 0; u < units; ++u) {
      const std::int64_t ib = u / n_blocks, jb = u % n_blocks;
      const std::int64_t is_end = imin(m_slivers, (ib + 1) * mc), js_end = imin(n_slivers, (jb + 1) * nc);
      if (k_blocked) {
        // Each B sliver's k block stays in L1 while the A slivers of the block pass; the tiles'
        // exact fp32 sums are parked between k blocks (this thread's slot) and continued in the
        // same k order, so the bits are those of one unblocked sum; the epilogue of a tile runs
        // right after its last block.
        float* slot = parked + static_cast<std::size_t>(parallel ? omp_get_thread_num() : 0) * parked_per_thread;
        const auto tile_of = [&](std::int64_t js, std::int64_t is) {
          return slot + ((js - jb * nc) * mc + (is - ib * mc)) * MR * NR;
        };
        for (std::int64_t kb = 0; kb < k_blocks; ++kb) {
          const std::int64_t k0 = k_start(kb), depth = k_start(kb + 1) - k0;
          for (std::int64_t js = jb * nc; js < js_end; ++js)
            for (std::int64_t is = ib * mc; is < is_end; ++is) {
              // The next call's parked tile (from L2, or L3: see tiles_in_l3) is on its way
              // while this one runs.
              if (kb > 0 && (is + 1 < is_end || js + 1 < js_end))
                prefetch_tile<T>(is + 1 < is_end ? tile_of(js, is + 1) : tile_of(js + 1, ib * mc));
              if (kb == k_blocks - 1)
                prefetch_epilogue<Act>(ctx, is * MR, js * NR, imin(MR, m - is * MR), imin(NR, n - js * NR));
              T::ukernel_part(depth, packed_a + is * MR * kp + k0 * MR, packed_b + js * NR * kp + k0 * NR,
                              tile_of(js, is), kb > 0);
              // After the last block, the epilogue while the tile is still in L1 (a pass over
              // all parked tiles afterwards read them back from L2 or L3).
              if (kb == k_blocks - 1)
                epilogue_tile<T, Act>(ctx, tile_of(js, is), MR, is * MR, js * NR, imin(MR, m - is * MR),
                                      imin(NR, n - js * NR), js, sub_out);
            }
        }
      } else {
        alignas(64) float tile[MR * NR];
        for (std::int64_t js = jb * nc; js < js_end; ++js) {
          for (std::int64_t is = ib * mc; is < is_end; ++is) {
            prefetch_epilogue<Act>(ctx, is * MR, js * NR, imin(MR, m - is * MR), imin(NR, n - js * NR));
            T::ukernel_part(kp, packed_a + is * MR * kp, packed_b + js * NR * kp, tile, false);  // kp = 0: zeroes
            epilogue_tile<T, Act>(ctx, tile, MR, is * MR, js * NR, imin(MR, m - is * MR), imin(NR, n - js * NR), js,
                                  sub_out);
          }
        }
      }
    }
  };
  std::int64_t sub_in = 0, sub_out = 0;
  if (parallel) {
#pragma omp parallel num_threads(static_cast <int>(threads)) reduction(+ : sub_in, sub_out)
    work(sub_in, sub_out);
  } else {
    work(sub_in, sub_out);
  }
  counters.fp16_subnormal_inputs += sub_in;
  counters.fp16_subnormal_outputs += sub_out;

  finish_bias_grad(p, partials, n_slivers, m_padded, totals, b_sums);
}

// The one place the activation becomes a template parameter: Engine::run<Act>(p, counters).
template <class Engine>
static void gemm_run_engine(const ops::GemmProblem& p, ops::GemmCounters& counters) {
  const bool tanh = p.args.epilogue.gelu == GeluVariant::tanh;
  switch (p.activation) {
    case ops::GemmActivation::none: return Engine::template run<ActNone>(p, counters);
    case ops::GemmActivation::relu: return Engine::template run<ActRelu>(p, counters);
    case ops::GemmActivation::gelu:
      return tanh ? Engine::template run<ActGelu<GeluVariant::tanh>>(p, counters)
                  : Engine::template run<ActGelu<GeluVariant::erf>>(p, counters);
    case ops::GemmActivation::drelu: return Engine::template run<ActDRelu>(p, counters);
    case ops::GemmActivation::dgelu:
      return tanh ? Engine::template run<ActDGelu<GeluVariant::tanh>>(p, counters)
                  : Engine::template run<ActDGelu<GeluVariant::erf>>(p, counters);
  }
}

template <class T>
struct BlockedEngine {
  template <class Act>
  static void run(const ops::GemmProblem& p, ops::GemmCounters& counters) {
    gemm_driver<T, Act>(p, counters);
  }
};

// The blocked (packing) engine of micro-kernel traits T.
template <class T>
static void gemm_run(const ops::GemmProblem& p, ops::GemmCounters& counters) {
  gemm_run_engine<BlockedEngine<T>>(p, counters);
}

}  // namespace
}  // namespace ampkit::cpu
