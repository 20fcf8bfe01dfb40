// The PyTorch GEMM peer (tools layer, bench/peers/). See torch_gemm_peer.hpp.
#include "tools/ampkit/bench/peers/torch_gemm_peer.hpp"

#include <unistd.h>

#include <cmath>
#include <sstream>

#include "tools/ampkit/bench/peers/child_process.hpp"
#include "tools/ampkit/bench/peers/torch_python.hpp"

namespace ampkit::tools::bench {

std::vector<double> run_torch_gemm_peer(const std::vector<TorchGemmCase>& cases, int threads, int min_samples,
                                        double target_ms, std::string& version, std::string& why) {
  std::vector<double> gflops(cases.size(), std::nan(""));
  const std::string script = bench_script_path("torch_gemm_cpu.py", "AMPKIT_TORCH_GEMM_PEER");
  if (access(script.c_str(), R_OK) != 0) {
    why = "PyTorch peer script " + script + " not found (set AMPKIT_TORCH_GEMM_PEER)";
    return gflops;
  }
  const std::optional<std::string> python = torch_python(why);
  if (!python) return gflops;
  std::string list;
  for (const TorchGemmCase& c : cases)
    list += c.dtype + ":" + op_pair_name(c.shape.op_a, c.shape.op_b) + ":" + std::to_string(c.shape.m) + ":" +
            std::to_string(c.shape.n) + ":" + std::to_string(c.shape.k) + ":" + c.epilogue + ";";
  const std::optional<std::string> out =
      run_child({*python, script, "--json", "--threads", std::to_string(threads), "--min-samples",
                 std::to_string(min_samples), "--target-s", std::to_string(target_ms / 1e3), "--cases", list},
                {}, true, "PyTorch GEMM peer " + script, why);
  if (!out) return gflops;
  // One line per case, in the order given.
  std::istringstream lines(*out);
  std::string line;
  std::size_t i = 0;
  while (std::getline(lines, line) && i < cases.size()) {
    if (line.empty() || line[0] != '{') continue;
    const double g = json_number_field(line, "gflops");
    if (std::isfinite(g) && g > 0) gflops[i] = g;
    if (version.empty()) version = json_string_field(line, "version");
    ++i;
  }
  if (i < cases.size()) why = "PyTorch GEMM peer printed " + std::to_string(i) + " of " + std::to_string(cases.size()) + " cases";
  return gflops;
}

}  // namespace ampkit::tools::bench
