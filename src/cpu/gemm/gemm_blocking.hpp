// The cache blocking of the blocked GEMM engine (kernels layer, internal): block sizes derived
// from the caches cpu_features() found, per micro-kernel shape. Called once per call by the
// driver (gemm_driver.hpp); tests force sizes through GemmProblem::forced_kc/mc/nc.
#pragma once

#include <cstdint>

namespace ampkit::cpu {

/// A micro-kernel's shape: an MR x NR fp32 tile from slivers packed `packed_bytes` per element,
/// k zero-padded to a multiple of k_step (bf16 pairs: 2; AMX: 32). tiles_in_l3: the engine's
/// parked tiles may fill a quarter of the L3 share instead of a quarter of L2 (the driver
/// prefetches each parked tile one micro-kernel call ahead; traits' kParkedTilesInL3).
struct GemmTileShape {
  std::int64_t mr, nr, packed_bytes, k_step;
  bool tiles_in_l3 = false;
};

/// Block sizes: kc in k elements (a multiple of k_step), mc and nc in slivers (MR rows, NR
/// columns). Any sizes give the same bits: a k block continues the parked fp32 sums in order.
struct GemmBlocking {
  std::int64_t kc, mc, nc;
};

/// The blocking for a micro-kernel shape (see docs/GEMM.md, "Blocking"):
///   kc: an MR x kc sliver of A and an NR x kc sliver of B fill at most half of L1d (at least 64
///       deep); the driver splits k into ceil(kp / kc) blocks of equal depth (up to k_step);
///   mc: an MC x kc block of packed A in half of the L2 (its share per logical CPU);
///   nc: the MC x NC parked fp32 tiles in a quarter of that L2 (tiles_in_l3: of this CPU's
///       share of L3; NC >= 4: MC gives way), and an NC x kc block of packed B in half of this
///       CPU's share of L3.
/// `forced` (a problem's forced_kc/mc/nc) replaces it when forced.kc > 0: kc rounded up to a
/// multiple of k_step, mc and nc at least 1.
GemmBlocking gemm_blocking(const GemmTileShape& shape, const GemmBlocking& forced = {0, 0, 0});

}  // namespace ampkit::cpu
