// Runs the PyTorch training-step peer (tools layer, bench/peers/): python3 on
// bench/torch_train_step.py in a child process (child_process.hpp), its one JSON line parsed.
#include "tools/ampkit/bench/peers/torch_train_peer.hpp"

#include <unistd.h>

#include <cmath>

#include "tools/ampkit/bench/peers/child_process.hpp"
#include "tools/ampkit/bench/peers/torch_python.hpp"

namespace ampkit::tools::bench {

std::string torch_train_peer_script() { return bench_script_path("torch_train_step.py", "AMPKIT_TORCH_TRAIN_PEER"); }

std::optional<TorchStep> run_torch_train_peer(const std::string& precision, int threads, long long steps,
                                              const std::vector<std::string>& options, std::string& why) {
  const std::string script = torch_train_peer_script();
  if (access(script.c_str(), R_OK) != 0) {
    why = "PyTorch peer script " + script + " not found (set AMPKIT_TORCH_TRAIN_PEER)";
    return std::nullopt;
  }
  const std::optional<std::string> python = torch_python(why);
  if (!python) return std::nullopt;
  std::vector<std::string> argv = {*python,     script, "--precision", precision, "--threads", std::to_string(threads),
                                   "--steps", std::to_string(steps)};
  argv.insert(argv.end(), options.begin(), options.end());
  const std::optional<std::string> out = run_child(argv, {}, true, "PyTorch peer " + script, why);
  if (!out) return std::nullopt;
  TorchStep step;
  step.step_ms = json_number_field(*out, "step_ms");
  step.version = json_string_field(*out, "version");
  if (!std::isfinite(step.step_ms) || step.step_ms <= 0) {
    why = "PyTorch peer printed no step time: " + out->substr(0, 200);
    return std::nullopt;
  }
  return step;
}

}  // namespace ampkit::tools::bench
