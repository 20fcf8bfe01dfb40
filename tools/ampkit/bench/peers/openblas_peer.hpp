// OpenBLAS sgemm as a peer of `ampkit bench gemm` / `bench linear` (tools layer, bench/peers/):
// the driver side, which spawns the helper program of openblas_peer_main.cpp (built as
// ampkit_openblas_peer next to the ampkit executable) and reads its JSON lines.
#pragma once

#include <string>
#include <vector>

#include "tools/ampkit/bench/peers/peer_shape.hpp"

namespace ampkit::tools::bench {

/// Runs OpenBLAS sgemm on every shape with `threads` threads in a child process
/// (ampkit_openblas_peer next to this executable; OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed
/// from its environment only, OPENBLAS_NUM_THREADS set). Returns the points it printed; on
/// failure an empty list and `note` says why. `note` also receives the core OpenBLAS chose.
std::vector<PeerPoint> run_openblas_peer(const std::vector<PeerShape>& shapes, int threads, int reps, double min_ms,
                                         std::string& note);

}  // namespace ampkit::tools::bench
