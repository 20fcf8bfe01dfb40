// The GEMM epilogue (kernels layer, internal): alpha, beta C, bias, aux, activation, bias-gradient
// partials and the rounding store of D, applied to one fp32 tile after its last k block.
// Included by gemm_driver.hpp (the blocked engines, AMX included) and, through it, by
// gemm_skinny.hpp; templated over the ISA's vector vocabulary T (Avx512Ops / Avx2Ops or traits
// derived from them: T::V, kLanes, load/store of f32/bf16/f16 lanes), so every engine shares it.
#pragma once

#include <cstdint>

#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/math/fp16_mode_math.hpp"
#include "cpu/math/gelu_math.hpp"
#include "cpu/math/gelu_rows.hpp"

namespace ampkit::cpu {
namespace {

// ---- Epilogue activations (types handed to the driver) ----
// apply<T>(x, aux) on one vector: forward x = act(x); backward x * act'(aux) (aux ignored by the
// forward ones). The tanh GELU is gelu_rows.hpp's vector form (the same bits with AVX2 and
// AVX-512, so in every engine); the erf GELU gelu_math.hpp's scalar math, vectorized here.
// Each is the scalar function of gelu_math.hpp lane by lane, bit for bit.
// f(x[i], aux[i]) for every lane: the scalar functions of gelu_math.hpp, vectorized by the
// compiler over one vector (the same bits as calling them one by one).
template <class T, class F>
[[gnu::always_inline]] static inline typename T::V lane_by_lane(typename T::V x, typename T::V aux, F f) {
  alignas(64) float xs[T::kLanes], as[T::kLanes];
  T::store(xs, x);
  T::store(as, aux);
#pragma omp simd
  for (std::int64_t i = 0; i < T::kLanes; ++i) xs[i] = f(xs[i], as[i]);
  return T::load(xs);
}

struct ActNone {
  static constexpr bool kReadsAux = false;
  template <class T>
  static inline typename T::V apply(typename T::V x, typename T::V) {
    return x;
  }
};
struct ActRelu {
  static constexpr bool kReadsAux = false;
  template <class T>
  static inline typename T::V apply(typename T::V x, typename T::V) {
    return T::floor0(x);  // max(0, x): x < 0 ? 0 : x, NaN and -0 kept, as gemm_math::relu
  }
};
template <GeluVariant G>
struct ActGelu {
  static constexpr bool kReadsAux = false;
  template <class T>
  static inline typename T::V apply(typename T::V x, typename T::V) {
    if constexpr (G == GeluVariant::tanh) {
      return gemm_math::gelu_tanh_vec(x);
    } else {
      return lane_by_lane<T>(x, x, [](float v, float) { return gemm_math::gelu_erf(v); });
    }
  }
};
struct ActDRelu {
  static constexpr bool kReadsAux = true;
  template <class T>
  static inline typename T::V apply(typename T::V x, typename T::V aux) {
    return lane_by_lane<T>(x, aux, [](float v, float a) { return gemm_math::relu_gate(v, a); });
  }
};
template <GeluVariant G>
struct ActDGelu {
  static constexpr bool kReadsAux = true;
  template <class T>
  static inline typename T::V apply(typename T::V x, typename T::V aux) {
    if constexpr (G == GeluVariant::tanh) {
      return gemm_math::dgelu_tanh_vec(x, aux);
    } else {
      return lane_by_lane<T>(x, aux, [](float v, float a) { return v * gemm_math::gelu_erf_derivative(a); });
    }
  }
};

// What the epilogue of every tile needs, fixed for the call.
struct EpilogueContext {
  const ops::GemmProblem* p;
  const float* bias;     // fp32 copy, padded with zeros to whole slivers (or null)
  float* grad_partials;  // [n_slivers][m_padded] row sums per NR sliver (or null)
  std::int64_t m_padded;
};

// Stores x[0..n) to an output with the fp16 rule: f16 results that round to a non-zero
// subnormal are counted and, under flush, written as signed zeros.
template <class T>
static inline void store_output(void* dst, DType t, const float* x, std::int64_t n, bool flush,
                                std::int64_t& subnormal_outputs) {
  if (t != DType::f16) {
    T::store_row(dst, t, x, n);
    return;
  }
  std::int64_t count = 0;
#pragma omp simd reduction(+ : count)
  for (std::int64_t i = 0; i < n; ++i) count += gemm_math::rounds_to_f16_subnormal(x[i]) ? 1 : 0;
  subnormal_outputs += count;
  if (count == 0 || !flush) {
    T::store_row(dst, t, x, n);
    return;
  }
  alignas(64) float flushed[T::kMr];
  for (std::int64_t i = 0; i < n; ++i) {
    const bool sub = gemm_math::rounds_to_f16_subnormal(x[i]);
    flushed[i] = sub ? (x[i] < 0.0f ? -0.0f : 0.0f) : x[i];
  }
  T::store_row(dst, t, flushed, n);
}

// `count` (0..kLanes) elements of dtype t at src widened to fp32; the other lanes read as 0 and
// no byte past them is touched (T::load_row's conversions, so its values).
template <class T>
[[gnu::always_inline]] static inline typename T::V load_lanes(const unsigned char* src, DType t, std::int64_t count) {
  if (count <= 0) return T::zero();
  if (t == DType::bf16) return T::template load<DType::bf16>(src, 0, count);
  if (t == DType::f16) return T::template load<DType::f16>(src, 0, count);
  return T::template load<DType::f32>(src, 0, count);
}

// The first `count` (0..kLanes) lanes of x rounded to dtype t at dst (T::store_row's rounding),
// with store_output's fp16 rule.
template <class T>
[[gnu::always_inline]] static inline void store_lanes(unsigned char* dst, DType t, typename T::V x, std::int64_t count,
                                                      bool flush, std::int64_t& subnormal_outputs) {
  if (count <= 0) return;
  if (t == DType::bf16) {
    T::template store<DType::bf16>(dst, 0, x, count);
  } else if (t == DType::f32) {
    T::template store<DType::f32>(dst, 0, x, count);
  } else {
    alignas(64) float lanes[T::kLanes];
    T::store(lanes, x);
    store_output<T>(dst, t, lanes, count, flush, subnormal_outputs);
  }
}

// load_lanes and store_lanes for a dtype known at compile time (D's, and aux's when it is D's).
template <class T, DType DT>
[[gnu::always_inline]] static inline typename T::V load_lanes_as(const unsigned char* src, std::int64_t count) {
  if (count <= 0) return T::zero();
  return T::template load<DT>(src, 0, count);
}
template <class T, DType DT>
[[gnu::always_inline]] static inline void store_lanes_as(unsigned char* dst, typename T::V x, std::int64_t count,
                                                         bool flush, std::int64_t& subnormal_outputs) {
  if constexpr (DT == DType::f16) {
    store_lanes<T>(dst, DT, x, count, flush, subnormal_outputs);
  } else if (count > 0) {
    T::template store<DT>(dst, 0, x, count);
  }
}

// Hints the `bytes` bytes at p into the caches: L1 and L2 (Locality 3) or L2 (2).
template <int Locality>
static inline void prefetch_bytes(const char* p, std::int64_t bytes) {
  for (std::int64_t at = 0; at < bytes; at += 64) __builtin_prefetch(p + at, 0, Locality);
  __builtin_prefetch(p + bytes - 1, 0, Locality);
}

// Hints the lines of columns [j0, j0 + nv), rows [i0, i0 + mv) of a column-major matrix (leading
// dimension ld, elements of dtype t) into L2.
static inline void prefetch_columns(const void* base, DType t, std::int64_t ld, std::int64_t i0, std::int64_t j0,
                                    std::int64_t mv, std::int64_t nv) {
  const std::int64_t size = static_cast<std::int64_t>(dtype_size(t));
  const char* col = static_cast<const char*>(base) + (i0 + j0 * ld) * size;
  for (std::int64_t j = 0; j < nv; ++j, col += ld * size) prefetch_bytes<2>(col, mv * size);
}

// Hints the lines of C, aux and D that the epilogue of a tile (rows [i0, i0 + mv), columns
// [j0, j0 + nv)) reads or writes, issued before the tile's last micro-kernel call so that they
// come from memory meanwhile (perf: half of the old epilogue's samples sat on its aux loads).
// Into L2 only: the micro-kernel's A sliver (up to 48 KiB) would push them out of L1 again;
// epilogue_tile brings what it reads into L1 a few columns ahead.
template <class Act>
static inline void prefetch_epilogue(const EpilogueContext& ctx, std::int64_t i0, std::int64_t j0, std::int64_t mv,
                                     std::int64_t nv) {
  const ops::GemmProblem& p = *ctx.p;
  const GemmArgs& a = p.args;
  const GemmEpilogue& e = a.epilogue;
  if (p.use_c) prefetch_columns(a.c, a.c_dtype, a.ldc, i0, j0, mv, nv);
  if (Act::kReadsAux || p.aux_out) prefetch_columns(e.aux, e.aux_dtype, e.aux_ld, i0, j0, mv, nv);
  prefetch_columns(a.d, a.d_dtype, a.ldd, i0, j0, mv, nv);
}

// The epilogue of one tile: tile[j * tile_ld + i] (fp32 sums, i < MR) -> D rows
// [i0, i0 + mv), columns [j0, j0 + nv). j_sliver indexes the bias-gradient partials.
// (MR <= tile_ld: the skinny engine hands strided blocks of any nv.) Each element sees the same
// operations in the same order as the scalar definition
//   x = alpha x (+ beta c) (+ bias); aux = x; x = act(x[, aux]); row sum += x; D = x,
// in one pass per pair of columns: their 2 MR values stay in registers from the tile to D (the
// earlier pass per step went over the tile in L1 six times; alpha = 1 is skipped, x * 1 = x).
// Rows >= mv are padding: computed (with C and aux read as 0) but never stored; the
// bias-gradient partials of rows >= m are never read. The tile is left as it was.
// DT: D's dtype (the stores of D and, when aux has D's dtype, of aux without a dtype switch).
template <class T, class Act, DType DT>
static void epilogue_tile_as(const EpilogueContext& ctx, const float* tile, std::int64_t tile_ld, std::int64_t i0,
                             std::int64_t j0, std::int64_t mv, std::int64_t nv, std::int64_t j_sliver,
                             std::int64_t& subnormal_outputs) {
  using V = typename T::V;
  constexpr std::int64_t MR = T::kMr, L = T::kLanes, NV = MR / L;
  static_assert(MR % L == 0, "tile columns of whole vectors");
  const ops::GemmProblem& p = *ctx.p;
  const GemmArgs& a = p.args;
  const GemmEpilogue& e = a.epilogue;
  const bool scale = a.alpha != 1.0f, use_c = p.use_c, aux_out = p.aux_out, flush = p.flush;
  const bool has_bias = ctx.bias != nullptr, row_sums = p.bias_grad == ops::GemmBiasGrad::rows_of_d;
  const V alpha = T::set1(a.alpha), beta = T::set1(a.beta);
  const std::int64_t dsize = static_cast<std::int64_t>(dtype_size(a.d_dtype));
  const std::int64_t csize = static_cast<std::int64_t>(dtype_size(a.c_dtype));
  const std::int64_t auxsize = static_cast<std::int64_t>(dtype_size(e.aux_dtype));
  const bool aux_as_d = e.aux_dtype == DT;
  // Column j of C, aux and D at base + j * step; vector v of a column at + v * L * size.
  unsigned char* d_col = static_cast<unsigned char*>(a.d) + (i0 + j0 * a.ldd) * dsize;
  const unsigned char* c_col = use_c ? static_cast<const unsigned char*>(a.c) + (i0 + j0 * a.ldc) * csize : nullptr;
  unsigned char* aux_col =
      e.aux != nullptr ? static_cast<unsigned char*>(e.aux) + (i0 + j0 * e.aux_ld) * auxsize : nullptr;
  constexpr std::int64_t kGroup = 2, kAhead = 2;  // columns
  std::int64_t count[NV];                         // valid rows per vector
  V bias[NV], sums[NV];
  for (std::int64_t v = 0; v < NV; ++v) {
    count[v] = mv - v * L < 0 ? 0 : mv - v * L > L ? L : mv - v * L;
    bias[v] = has_bias ? T::load(ctx.bias + i0 + v * L) : T::zero();
    sums[v] = T::zero();
  }
  for (std::int64_t jg = 0; jg < nv; jg += kGroup) {
    // What the group kAhead columns on reads, from L2 into L1 (a few columns ahead, not the whole
    // tile: columns a multiple of 4 KiB apart share one L1 set).
    for (std::int64_t j = jg + kAhead; j < jg + kAhead + kGroup && j < nv; ++j) {
      if (use_c) prefetch_bytes<3>(reinterpret_cast<const char*>(c_col + (j - jg) * a.ldc * csize), mv * csize);
      if constexpr (Act::kReadsAux)
        prefetch_bytes<3>(reinterpret_cast<const char*>(aux_col + (j - jg) * e.aux_ld * auxsize), mv * auxsize);
    }
    const std::int64_t cols = nv - jg < kGroup ? nv - jg : kGroup;
    V x[kGroup][NV], aux[kGroup][NV];
#pragma GCC unroll 4
    for (std::int64_t c = 0; c < kGroup; ++c) {
#pragma GCC unroll 4
      for (std::int64_t v = 0; v < NV; ++v) {
        x[c][v] = aux[c][v] = T::zero();  // columns past nv: computed, never stored
        if (c >= cols) continue;
        const std::int64_t n_rows = count[v];
        x[c][v] = T::load(tile + (jg + c) * tile_ld + v * L);
        if (scale) x[c][v] = T::mul(x[c][v], alpha);
        if (use_c)
          x[c][v] =
              T::add(x[c][v], T::mul(beta, load_lanes<T>(c_col + (c * a.ldc + v * L) * csize, a.c_dtype, n_rows)));
        if (has_bias) x[c][v] = T::add(x[c][v], bias[v]);
        unsigned char* aux_at = aux_out || Act::kReadsAux ? aux_col + (c * e.aux_ld + v * L) * auxsize : nullptr;
        if (aux_out) {
          if (aux_as_d) {
            store_lanes_as<T, DT>(aux_at, x[c][v], n_rows, flush, subnormal_outputs);
          } else {
            store_lanes<T>(aux_at, e.aux_dtype, x[c][v], n_rows, flush, subnormal_outputs);
          }
        }
        if constexpr (Act::kReadsAux)
          aux[c][v] = aux_as_d ? load_lanes_as<T, DT>(aux_at, n_rows) : load_lanes<T>(aux_at, e.aux_dtype, n_rows);
      }
    }
    // The activation of the group's vectors as independent chains in one straight run (one
    // vector at a time left GELU's division latency exposed).
#pragma GCC unroll 4
    for (std::int64_t c = 0; c < kGroup; ++c)
#pragma GCC unroll 4
      for (std::int64_t v = 0; v < NV; ++v) x[c][v] = Act::template apply<T>(x[c][v], aux[c][v]);
#pragma GCC unroll 4
    for (std::int64_t c = 0; c < kGroup; ++c) {
      if (c >= cols) break;
#pragma GCC unroll 4
      for (std::int64_t v = 0; v < NV; ++v) {
        if (row_sums) sums[v] = T::add(sums[v], x[c][v]);
        store_lanes_as<T, DT>(d_col + (c * a.ldd + v * L) * dsize, x[c][v], count[v], flush, subnormal_outputs);
      }
    }
    d_col += kGroup * a.ldd * dsize;
    if (use_c) c_col += kGroup * a.ldc * csize;
    if (aux_col != nullptr) aux_col += kGroup * e.aux_ld * auxsize;
  }
  if (row_sums)
    for (std::int64_t v = 0; v < NV; ++v) T::store(ctx.grad_partials + j_sliver * ctx.m_padded + i0 + v * L, sums[v]);
}

template <class T, class Act>
static void epilogue_tile(const EpilogueContext& ctx, const float* tile, std::int64_t tile_ld, std::int64_t i0,
                          std::int64_t j0, std::int64_t mv, std::int64_t nv, std::int64_t j_sliver,
                          std::int64_t& subnormal_outputs) {
  switch (ctx.p->args.d_dtype) {
    case DType::bf16:
      return epilogue_tile_as<T, Act, DType::bf16>(ctx, tile, tile_ld, i0, j0, mv, nv, j_sliver, subnormal_outputs);
    case DType::f16:
      return epilogue_tile_as<T, Act, DType::f16>(ctx, tile, tile_ld, i0, j0, mv, nv, j_sliver, subnormal_outputs);
    default:
      return epilogue_tile_as<T, Act, DType::f32>(ctx, tile, tile_ld, i0, j0, mv, nv, j_sliver, subnormal_outputs);
  }
}

}  // namespace
}  // namespace ampkit::cpu
