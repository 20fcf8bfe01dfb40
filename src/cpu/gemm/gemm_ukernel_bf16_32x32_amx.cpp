// GEMM engine with the bf16 32x32 AMX micro-kernel (kernels layer). Kernel-list entry
// "gemm_ukernel_bf16_32x32_amx" (gemm_kernel_list.cpp), run only after kernel_needs.cpp found
// AMX-BF16 and the OS's tile-data permission: both operands bf16 as the mode sees them (bf16, or
// f16 rounded to bf16 by the alt mode while packing); fp32 accumulation. Per 32-deep k step
// tdpbf16ps sums the even-k and the odd-k products apart from zero (FMA, round-to-nearest-even),
// then acc += (even + odd) (docs/GEMM.md; vdpbf16ps adds odd then even straight into acc); bf16
// subnormal inputs and fp32 subnormal results are zero.
#include <immintrin.h>

#include "cpu/gemm/gemm_driver.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/simd/simd_avx512.hpp"

namespace ampkit::cpu {
namespace {

// The LDTILECFG operand (palette 1): tmm0..tmm7 all 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};
static_assert(sizeof(TileConfig) == 64);

// tdpbf16ps C, X, Y: C[r][c] += sum over q < 16 of X[r][2q] Y[q][2c] + X[r][2q + 1] Y[q][2c + 1]
// (C: 16 rows x 16 fp32; X: 16 rows x 32 bf16; Y: 16 k-pair rows x 16 columns x 2 bf16).
// With AMX rows = D's columns j and AMX columns = D's rows i, C row j is D(i .. i + 15, j): the
// driver's tile[j * 32 + i] directly. Y is packed A as the driver packs it for vdpbf16ps
// ([kp/2][32][2]: a 16-row tile at a stride of 128 bytes per half); X is packed B, k-contiguous
// per column in groups of 32 ([kp/32][32][32]: a tile is 1 KiB contiguous).
//   a: packed A sliver (32 rows of D), b: packed B sliver (32 columns of D), each at the
//   driver's k block; kc % 32 == 0; accumulate: continue the sums parked in tile.
// 4 accumulator tiles (2 x 2), per 32 k: 2 A-half tiles, 2 B-half tiles, 4 tdpbf16ps.
// k blocks from the caches (gemm_blocking.hpp, multiples of 32): a block's parts of the A and B
// slivers stay in L1; parking and reloading the fp32 sums costs 8 KiB of tile traffic per block.
struct Bf16Amx : Avx512Ops {
  using Packed = std::uint16_t;
  static constexpr std::int64_t kMr = 32, kNr = 32;
  static constexpr bool kPairs = true;
  static constexpr std::int64_t kKStep = 32;
  static constexpr int kBKGroup = 32;

  // Every thread loads the configuration before its first tile instruction of a call (cheap next
  // to a parallel region; another library in the process may have loaded its own in between).
  static inline void prepare_thread() {
    static constexpr TileConfig config{};
    _tile_loadconfig(&config);
  }

  // One k group of packed B from bf16 contiguous along rows (op(B) transposed):
  //   dst[r * 32 + t] = src[t * k_stride + r] (r < rows, t < run; the rest 0), a 32 x 32 16-bit
  //   transpose: lines t are zmm registers; bit 0 of the index by 16-bit shifts and blends,
  //   bits 1..4 by dword permutes (in stage b, element (i, j) with bit b of i clear and set in j
  //   trades places with (i + 2^b, j - 2^b)).
  // sums (or null): sums[r] += src[t * k_stride + r] as fp32, t in order (lanes are rows).
  static inline void transpose_k_group(const std::uint16_t* src, std::int64_t k_stride, std::int64_t rows,
                                       std::int64_t run, std::uint16_t* dst, float* sums) {
    const __mmask32 in_rows = rows >= 32 ? ~__mmask32{0} : (__mmask32{1} << rows) - 1u;
    __m512i x[32];
    for (int t = 0; t < 32; ++t)
      x[t] = t < run ? _mm512_maskz_loadu_epi16(in_rows, src + t * k_stride) : _mm512_setzero_si512();
    if (sums != nullptr) {
      __m512 s0 = _mm512_load_ps(sums), s1 = _mm512_load_ps(sums + 16);
      for (int t = 0; t < run; ++t) {
        s0 = _mm512_add_ps(s0, simd512::bf16x16_to_f32(_mm512_castsi512_si256(x[t])));
        s1 = _mm512_add_ps(s1, simd512::bf16x16_to_f32(_mm512_extracti64x4_epi64(x[t], 1)));
      }
      _mm512_store_ps(sums, s0);
      _mm512_store_ps(sums + 16, s1);
    }
    for (int i = 0; i < 32; i += 2) {  // bit 0: 16-bit halves of each dword
      const __m512i a = x[i], b = x[i + 1];
      x[i] = _mm512_mask_blend_epi16(0xaaaaaaaau, a, _mm512_slli_epi32(b, 16));
      x[i + 1] = _mm512_mask_blend_epi16(0xaaaaaaaau, _mm512_srli_epi32(a, 16), b);
    }
#pragma GCC unroll 4
    for (int bit = 1; bit < 5; ++bit) {  // in dwords: step h = 2^(bit - 1)
      const int h = 1 << (bit - 1), step = 1 << bit;
      alignas(64) std::int32_t lo_idx[16], hi_idx[16];
      for (int j = 0; j < 16; ++j) {
        const bool high = (j & h) != 0;
        lo_idx[j] = high ? 16 + j - h : j;
        hi_idx[j] = high ? 16 + j : j + h;
      }
      const __m512i lo = _mm512_load_si512(lo_idx), hi = _mm512_load_si512(hi_idx);
      for (int i = 0; i < 32; ++i) {
        if ((i & step) != 0) continue;
        const __m512i a = x[i], b = x[i + step];
        x[i] = _mm512_permutex2var_epi32(a, lo, b);
        x[i + step] = _mm512_permutex2var_epi32(a, hi, b);
      }
    }
    for (int r = 0; r < 32; ++r) _mm512_storeu_si512(dst + r * 32, x[r]);
  }

  static inline void ukernel_part(std::int64_t kc, const std::uint16_t* a, const std::uint16_t* b, float* tile,
                                  bool accumulate) {
    if (accumulate) {
      _tile_loadd(0, tile, 128);
      _tile_loadd(1, tile + 16, 128);
      _tile_loadd(2, tile + 16 * 32, 128);
      _tile_loadd(3, tile + 16 * 32 + 16, 128);
    } else {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
    }
    for (std::int64_t k0 = 0; k0 < kc; k0 += 32) {
      const std::uint16_t* a_block = a + k0 * 32;  // [16 pairs][32 rows][2]
      const std::uint16_t* b_block = b + k0 * 32;  // [32 columns][32 k]
      _tile_loadd(4, a_block, 128);                // rows i 0..15 of D
      _tile_loadd(5, a_block + 32, 128);           // rows i 16..31
      _tile_loadd(6, b_block, 64);                 // columns j 0..15
      _tile_loadd(7, b_block + 512, 64);           // columns j 16..31
      _tile_dpbf16ps(0, 6, 4);
      _tile_dpbf16ps(1, 6, 5);
      _tile_dpbf16ps(2, 7, 4);
      _tile_dpbf16ps(3, 7, 5);
    }
    _tile_stored(0, tile, 128);
    _tile_stored(1, tile + 16, 128);
    _tile_stored(2, tile + 16 * 32, 128);
    _tile_stored(3, tile + 16 * 32 + 16, 128);
  }
};

}  // namespace

void gemm_run_bf16_amx(const ops::GemmProblem& problem, ops::GemmCounters& counters) {
  gemm_run<Bf16Amx>(problem, counters);
}

}  // namespace ampkit::cpu
