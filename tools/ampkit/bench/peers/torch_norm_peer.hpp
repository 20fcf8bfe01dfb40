// The PyTorch LayerNorm / RMSNorm peer of `ampkit bench norm` (tools layer, bench/peers/): runs
// bench/torch_norm_cpu.py in a child Python (its own process and threads) on the same cases and
// thread count, and reads one JSON line per case.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ampkit::tools::bench {

/// One case for PyTorch: op "layer_norm" / "rms_norm", pass "forward" / "backward", dtype names
/// of x and of the parameters, and the [rows, n] shape.
struct TorchNormCase {
  std::string op, pass, x_dtype, param_dtype;
  std::int64_t rows = 1, n = 1;
};

/// PyTorch's result for one case: the median ms, or why there is none (PyTorch refused it).
struct TorchNormPoint {
  double ms = 0.0;
  std::string skipped;
};

/// One point per case (parallel to `cases`); empty, with `why` set, when nothing could be run.
/// `version` gets torch.__version__.
std::vector<TorchNormPoint> run_torch_norm_peer(const std::vector<TorchNormCase>& cases, int threads,
                                                int min_samples, double target_ms, std::string& version,
                                                std::string& why);

}  // namespace ampkit::tools::bench
