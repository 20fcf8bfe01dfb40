// Finds the Python interpreter of the PyTorch peers (tools layer, bench/peers/). See torch_python.hpp.
#include "tools/ampkit/bench/peers/torch_python.hpp"

#include <cstdlib>
#include <vector>

#include "tools/ampkit/bench/peers/child_process.hpp"

namespace ampkit::tools::bench {

std::optional<std::string> torch_python(std::string& why) {
  std::vector<std::string> candidates = {"python3", "/usr/bin/python3"};
  if (const char* env = std::getenv("AMPKIT_PYTHON"); env != nullptr && *env != '\0') candidates = {env};
  for (const std::string& candidate : candidates) {
    std::string probe_why;
    if (run_child({candidate, "-c", "import torch"}, {}, true, candidate + " -c 'import torch'", probe_why))
      return candidate;
  }
  why = "PyTorch not importable by python3 (Debian: apt-get install python3-torch; or set AMPKIT_PYTHON)";
  return std::nullopt;
}

std::string bench_script_path(const char* file, const char* env_override) {
  if (const char* env = std::getenv(env_override); env != nullptr && *env != '\0') return env;
  return std::string(AMPKIT_SOURCE_DIR "/bench/") + file;
}

}  // namespace ampkit::tools::bench
