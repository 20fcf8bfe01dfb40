// The PyTorch peer of `ampkit bench train` (tools layer, bench/peers/): runs
// bench/torch_train_step.py (the same GPT, batch, optimizer and precision in PyTorch, same device)
// in a child python3 and reads its median step time.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ampkit::tools::bench {

struct TorchStep {
  double step_ms = 0.0;  // median over the timed steps
  std::string version;   // torch.__version__
};

/// The script's path: AMPKIT_TORCH_TRAIN_PEER if set, else bench/torch_train_step.py of the
/// source tree this binary was built from.
std::string torch_train_peer_script();

/// Runs the script (with AMPKIT_PYTHON, else the first of python3 and /usr/bin/python3 that
/// imports torch) with `precision` ("fp32", "bf16", "fp16"), `threads`, `steps` and `options`
/// (the model's sizes and device, e.g. {"--device", "cuda", "--width", "384"}). Returns nothing
/// and sets `why` when python3 or torch is missing or the script fails.
std::optional<TorchStep> run_torch_train_peer(const std::string& precision, int threads, long long steps,
                                              const std::vector<std::string>& options, std::string& why);

}  // namespace ampkit::tools::bench
