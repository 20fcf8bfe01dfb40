// The PyTorch GEMM peer of `ampkit bench gemm` / `bench linear` (tools layer, bench/peers/): runs
// bench/torch_gemm_cpu.py in a child Python (its own process, its own threads) on the same cases,
// same layouts and same thread count, and reads one JSON line per case.
#pragma once

#include <string>
#include <vector>

#include "tools/ampkit/bench/peers/peer_shape.hpp"

namespace ampkit::tools::bench {

/// One case for PyTorch: a shape with its ops, "f32" or "bf16", and ampkit's epilogue name
/// (the script spells each epilogue as a PyTorch training step does; see its docstring).
struct TorchGemmCase {
  PeerShape shape;
  std::string dtype;
  std::string epilogue;
  bool operator==(const TorchGemmCase&) const = default;
};

/// GFLOP/s (2mnk / median time) per case, parallel to `cases`, NaN where not measured; `why` is
/// set when nothing could be measured (no PyTorch, script missing or failed). `version` gets
/// torch.__version__.
std::vector<double> run_torch_gemm_peer(const std::vector<TorchGemmCase>& cases, int threads, int min_samples,
                                        double target_ms, std::string& version, std::string& why);

}  // namespace ampkit::tools::bench
