// The checkpoint of an `ampkit train` run (tools layer, train/): the library's checkpoint
// (ampkit/train/checkpoint.hpp: the trainer's state, the data order, the curves) with the run
// configuration stored as the metadata entry "config" (config_to_json's JSON).
#pragma once

#include <string>

#include "ampkit/train/checkpoint.hpp"
#include "tools/ampkit/train/config.hpp"

namespace ampkit::tools::train {

// The train layer's names (checkpoints, corpus, batches, schedule, sampler, files) are used
// unqualified by the command's code.
using namespace ampkit::train;

/// The metadata key of the run configuration.
constexpr const char* kConfigMetadataKey = "config";

struct TrainCheckpoint : ampkit::train::Checkpoint {
  TrainConfig config;  // the stored fields (config_to_json)
};

/// Writes `checkpoint` (its config as the metadata entry "config") atomically. Throws ampkit::Error.
void save_run_checkpoint(const std::string& path, const TrainCheckpoint& checkpoint);
/// Reads and checks the checkpoint at `path` and its run configuration. Throws ampkit::Error
/// "checkpoint '<path>': ...".
TrainCheckpoint load_run_checkpoint(const std::string& path);
/// The run of a checkpoint already read (`what` names it in messages).
TrainCheckpoint run_checkpoint_from(ampkit::train::Checkpoint checkpoint, std::string_view what);

}  // namespace ampkit::tools::train
