// The peer phases of `ampkit bench gemm` / `bench linear` (tools layer, bench/): after ampkit's
// own cases, OpenBLAS in a child process per thread count, then oneDNN matmul in-process, then PyTorch
// (bench/torch_gemm_cpu.py) in a child Python per thread count; each
// row then gets its peak and its peers' figures.
#pragma once

#include <string>
#include <vector>

#include "tools/ampkit/bench/gemm_rows.hpp"
#include "tools/ampkit/bench/timing.hpp"

namespace ampkit::tools::bench {

/// Runs the peer phases for the rows (OpenBLAS child per thread count, then oneDNN, then PyTorch),
/// then fills each row's peak and peer figures. `peers` is a subset of {"openblas", "onednn", "torch"}. Notes on
/// what ran (or why a peer did not) go to `notes`.
void attach_peers(std::vector<BenchRow>& rows, const Peaks& peaks, const std::vector<std::string>& peers,
                  const MeasureOptions& options, std::vector<std::string>& notes);

}  // namespace ampkit::tools::bench
