// The PyTorch norm peer (tools layer, bench/peers/). See torch_norm_peer.hpp.
#include "tools/ampkit/bench/peers/torch_norm_peer.hpp"

#include <cmath>

#include "tools/ampkit/bench/peers/child_process.hpp"
#include "tools/ampkit/bench/peers/torch_python.hpp"

namespace ampkit::tools::bench {

std::vector<TorchNormPoint> run_torch_norm_peer(const std::vector<TorchNormCase>& cases, int threads,
                                                int min_samples, double target_ms, std::string& version,
                                                std::string& why) {
  std::string list;
  for (const TorchNormCase& c : cases)
    list += c.op + ":" + c.pass + ":" + c.x_dtype + ":" + c.param_dtype + ":" + std::to_string(c.rows) + ":" +
            std::to_string(c.n) + ";";
  const std::optional<std::vector<std::string>> lines =
      run_torch_script("torch_norm_cpu.py", "AMPKIT_TORCH_NORM_PEER",
                       {"--json", "--threads", std::to_string(threads), "--min-samples", std::to_string(min_samples),
                        "--target-s", std::to_string(target_ms / 1e3), "--cases", list},
                       why);
  if (!lines) return {};
  if (lines->size() != cases.size()) {
    why = "PyTorch norm peer printed " + std::to_string(lines->size()) + " of " + std::to_string(cases.size()) +
          " cases";
    return {};
  }
  std::vector<TorchNormPoint> points(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string& line = (*lines)[i];
    points[i].skipped = json_string_field(line, "skipped");
    const double ms = json_number_field(line, "ms");
    if (points[i].skipped.empty() && !(std::isfinite(ms) && ms > 0)) points[i].skipped = "no time printed";
    if (points[i].skipped.empty()) points[i].ms = ms;
    if (version.empty()) version = json_string_field(line, "version");
  }
  return points;
}

}  // namespace ampkit::tools::bench
