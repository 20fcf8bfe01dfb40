// Runs the PyTorch training-step peer (tools layer, bench/peers/): python3 on
// bench/torch_train_step.py in a child process (child_process.hpp), its one JSON line parsed.
#include "tools/ampkit/bench/peers/torch_train_peer.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "tools/ampkit/bench/peers/child_process.hpp"

namespace ampkit::tools::bench {

std::string torch_train_peer_script() {
  if (const char* env = std::getenv("AMPKIT_TORCH_TRAIN_PEER"); env != nullptr && *env != '\0') return env;
  return AMPKIT_SOURCE_DIR "/bench/torch_train_step.py";
}

std::optional<TorchStep> run_torch_train_peer(const std::string& precision, int threads, long long steps,
                                              std::string& why) {
  const std::string script = torch_train_peer_script();
  if (access(script.c_str(), R_OK) != 0) {
    why = "PyTorch peer script " + script + " not found (set AMPKIT_TORCH_TRAIN_PEER)";
    return std::nullopt;
  }
  // The first interpreter that imports torch: AMPKIT_PYTHON if set; else python3 on PATH, then
  // Debian's /usr/bin/python3 (python3-torch installs there, and a PATH python3 may be another).
  std::vector<std::string> candidates = {"python3", "/usr/bin/python3"};
  if (const char* env = std::getenv("AMPKIT_PYTHON"); env != nullptr && *env != '\0') candidates = {env};
  std::string python;
  for (const std::string& candidate : candidates) {
    std::string probe_why;
    if (run_child({candidate, "-c", "import torch"}, {}, true, candidate + " -c 'import torch'", probe_why)) {
      python = candidate;
      break;
    }
  }
  if (python.empty()) {
    why = "PyTorch not importable by python3 (Debian: apt-get install python3-torch; or set AMPKIT_PYTHON)";
    return std::nullopt;
  }
  const std::optional<std::string> out = run_child({python, script, "--precision", precision, "--threads",
                                                    std::to_string(threads), "--steps", std::to_string(steps)},
                                                   {}, true, "PyTorch peer " + script, why);
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
