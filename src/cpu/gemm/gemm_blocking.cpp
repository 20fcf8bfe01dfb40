// The cache blocking of the blocked GEMM engine (kernels layer): block sizes from the caches
// (cpu_caches.cpp) and the micro-kernel's shape; rules in gemm_blocking.hpp and docs/GEMM.md.
#include "cpu/gemm/gemm_blocking.hpp"

#include "ampkit/device/cpu.hpp"

namespace ampkit::cpu {
namespace {

std::int64_t clamp(std::int64_t v, std::int64_t lo, std::int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }
std::int64_t round_up(std::int64_t v, std::int64_t step) { return (v + step - 1) / step * step; }

}  // namespace

GemmBlocking gemm_blocking(const GemmTileShape& s, const GemmBlocking& forced) {
  const std::int64_t step = s.k_step;
  if (forced.kc > 0) return {round_up(forced.kc, step), forced.mc > 0 ? forced.mc : 1, forced.nc > 0 ? forced.nc : 1};
  const CpuCaches& c = cpu_features().caches;
  // kc: both slivers of one micro-kernel call in half of L1d (the rest: the tile, the prefetched
  // lines of the next A sliver, the stack). At least 64 deep: shallower blocks spend more on
  // parking the tile (MR x NR loads and stores per block) than they gain.
  const std::int64_t per_k = (s.mr + s.nr) * s.packed_bytes;
  const std::int64_t granule = step > 16 ? step : 16;
  const std::int64_t kc = clamp(c.l1d / 2 / per_k / granule * granule, round_up(64, granule), 4096);
  // mc: packed A of the block in half of this CPU's share of L2; the block's parked fp32 tiles
  // (mc x nc of them, reloaded once per k block) in a quarter of it, with nc >= 4 (mc gives way)
  // -- or in a quarter of the L3 share (tiles_in_l3): each A block of L2 then serves many more
  // B slivers before the next comes from memory (f32 32x12 on a 1 MiB L2: NC 5 -> 85,
  // (4096, 1024, 4096) 0.6 -> 0.8 of the FMA peak;
  // docs/perf-log/2026-12-02-gemm-f32-micro-kernel.md).
  const std::int64_t l2 = c.l2 / (c.l2_sharing > 1 ? 2 : 1);
  // (The L3 share: the L2 where there is none.)
  const std::int64_t l3 = c.l3 > 0 ? c.l3 / (c.l3_sharing > 0 ? c.l3_sharing : 1) : c.l2;
  const std::int64_t tiles = clamp((s.tiles_in_l3 ? l3 : l2) / 4 / (s.mr * s.nr * 4), 4, 1 << 20);
  const std::int64_t mc = clamp(l2 / 2 / (s.mr * kc * s.packed_bytes), 1, tiles / 4);
  // nc: what the parked tiles leave, and packed B of the block in half of this CPU's L3 share.
  const std::int64_t nc_b = l3 / 2 / (s.nr * kc * s.packed_bytes);
  const std::int64_t nc = clamp(tiles / mc < nc_b ? tiles / mc : nc_b, 1, 4096);
  return {kc, mc, nc};
}

}  // namespace ampkit::cpu
