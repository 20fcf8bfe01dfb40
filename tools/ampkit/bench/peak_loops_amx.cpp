// The machine's AMX bf16 ceiling (tools layer, bench/; compiled with AMX flags by its name): a
// register-only loop of tdpbf16ps on 4 independent accumulator tiles (the 2 x 2 blocking of the
// GEMM micro-kernel, without its loads). Timed by peak.cpp; called only when the CPU has AMX-BF16
// and the OS granted the tile-data permission.
#include <immintrin.h>

#include <cstdint>

#include "tools/ampkit/bench/peak.hpp"

namespace ampkit::tools::bench {
namespace {

// Palette 1, tmm0..tmm7 all 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

}  // namespace

// Per iteration: 4 tdpbf16ps x 16 x 16 outputs x 32 products x 2 flops = kAmxPeakFlopsPerIteration.
float peak_loop_amx_bf16(std::int64_t iterations) {
  static constexpr TileConfig config{};
  _tile_loadconfig(&config);
  alignas(64) static const std::uint16_t zeros[16 * 32] = {};  // the sums stay finite
  _tile_loadd(4, zeros, 64);
  _tile_loadd(5, zeros, 64);
  _tile_loadd(6, zeros, 64);
  _tile_loadd(7, zeros, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (std::int64_t it = 0; it < iterations; ++it) {
    _tile_dpbf16ps(0, 6, 4);
    _tile_dpbf16ps(1, 6, 5);
    _tile_dpbf16ps(2, 7, 4);
    _tile_dpbf16ps(3, 7, 5);
  }
  alignas(64) float out[16 * 16];
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}

}  // namespace ampkit::tools::bench
