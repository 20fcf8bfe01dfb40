// The PyTorch GEMM peer (tools layer, bench/peers/). See torch_gemm_peer.hpp.
#include "tools/ampkit/bench/peers/torch_gemm_peer.hpp"

#include <cmath>

#include "tools/ampkit/bench/peers/child_process.hpp"
#include "tools/ampkit/bench/peers/torch_python.hpp"

namespace ampkit::tools::bench {

std::vector<double> run_torch_gemm_peer(const std::vector<TorchGemmCase>& cases, int threads, int min_samples,
                                        double target_ms, std::string& version, std::string& why) {
  std::vector<double> gflops(cases.size(), std::nan(""));
  std::string list;
  for (const TorchGemmCase& c : cases)
    list += c.dtype + ":" + op_pair_name(c.shape.op_a, c.shape.op_b) + ":" + std::to_string(c.shape.m) + ":" +
            std::to_string(c.shape.n) + ":" + std::to_string(c.shape.k) + ":" + c.epilogue + ";";
  const std::optional<std::vector<std::string>> lines =
      run_torch_script("torch_gemm_cpu.py", "AMPKIT_TORCH_GEMM_PEER",
                       {"--json", "--threads", std::to_string(threads), "--min-samples", std::to_string(min_samples),
                        "--target-s", std::to_string(target_ms / 1e3), "--cases", list},
                       why);
  if (!lines) return gflops;
  // One line per case, in the order given.
  for (std::size_t i = 0; i < lines->size() && i < cases.size(); ++i) {
    const double g = json_number_field((*lines)[i], "gflops");
    if (std::isfinite(g) && g > 0) gflops[i] = g;
    if (version.empty()) version = json_string_field((*lines)[i], "version");
  }
  if (lines->size() < cases.size())
    why = "PyTorch GEMM peer printed " + std::to_string(lines->size()) + " of " + std::to_string(cases.size()) +
          " cases";
  return gflops;
}

}  // namespace ampkit::tools::bench
