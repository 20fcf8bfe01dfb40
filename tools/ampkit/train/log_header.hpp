// The first line of `ampkit train --log FILE` (tools layer, train/): what produced the run, so
// that a tool reading the log needs nothing else (docs/TRAIN.md, "The log").
#pragma once

#include <cstdint>
#include <string>

#include "tools/ampkit/train/config.hpp"

namespace ampkit::tools::train {

/// One JSON object, one line without the newline: {"format":"ampkit-train-log-1", "version",
/// "commit", "machine": {hostname, cpu, isa_best, isa_active, threads, ranks, device},
/// "start_step", "config": {every option of the run}}. Step lines follow it.
std::string log_header_line(const TrainConfig& config, std::int64_t start_step, int ranks);

}  // namespace ampkit::tools::train
