// The --log header line (log_header.hpp).
#include "tools/ampkit/train/log_header.hpp"

#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ampkit/core/threading.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/version.hpp"
#include "tools/ampkit/common/build_info.hpp"

namespace ampkit::tools::train {
namespace {

// /proc/cpuinfo's first "model name" ("" where there is none).
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("model name")) {
      const std::size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "";
}

std::string optional_text(const std::optional<std::string>& s) { return s.value_or(""); }

}  // namespace

std::string log_header_line(const TrainConfig& c, std::int64_t start_step, int ranks) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  nlohmann::ordered_json machine = {{"hostname", host},
                                    {"cpu", cpu_model()},
                                    {"isa_best", std::string(isa_name(cpu_features().best()))},
                                    {"isa_active", std::string(isa_name(active_isa()))},
                                    {"threads", num_threads()},
                                    {"ranks", ranks},
                                    {"device", c.cuda ? "cuda" : "cpu"}};
  // The stored part (what a checkpoint keeps), then the run's own options.
  nlohmann::ordered_json config = nlohmann::ordered_json::parse(config_to_json(c));
  config["zero"] = c.zero;
  config["bucket_mb"] = c.bucket_mb;
  config["eval_every"] = c.eval_every;
  config["checkpoint_every"] = c.checkpoint_every;
  config["log"] = optional_text(c.log);
  config["plot"] = optional_text(c.plot);
  config["checkpoint"] = optional_text(c.checkpoint);
  config["resume"] = optional_text(c.resume);
  config["init_from"] = optional_text(c.init_from);
  config["keep_best"] = optional_text(c.keep_best);
  config["threads"] = c.threads;
  config["sample_tokens"] = c.sample_tokens;
  config["temperature"] = c.temperature;
  config["top_k"] = c.top_k;
  nlohmann::ordered_json header = {{"format", "ampkit-train-log-1"},  {"version", AMPKIT_VERSION},
                                   {"commit", tools::build_commit()}, {"machine", machine},
                                   {"start_step", start_step},        {"config", config}};
  return header.dump();
}

}  // namespace ampkit::tools::train
