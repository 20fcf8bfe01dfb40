// Finds the Python interpreter of the PyTorch peers (tools layer, bench/peers/). See torch_python.hpp.
#include "tools/ampkit/bench/peers/torch_python.hpp"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
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

std::optional<std::vector<std::string>> run_torch_script(const char* file, const char* env_override,
                                                         const std::vector<std::string>& args, std::string& why) {
  const std::string script = bench_script_path(file, env_override);
  if (access(script.c_str(), R_OK) != 0) {
    why = std::string("PyTorch peer script ") + script + " not found (set " + env_override + ")";
    return std::nullopt;
  }
  const std::optional<std::string> python = torch_python(why);
  if (!python) return std::nullopt;
  std::vector<std::string> argv = {*python, script};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::optional<std::string> out = run_child(argv, {}, true, "PyTorch peer " + script, why);
  if (!out) return std::nullopt;
  std::vector<std::string> lines;
  std::istringstream in(*out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '{') lines.push_back(line);
  return lines;
}

}  // namespace ampkit::tools::bench
