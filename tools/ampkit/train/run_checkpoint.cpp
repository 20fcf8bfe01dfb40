// The checkpoint of an `ampkit train` run (tools layer, train/). See run_checkpoint.hpp.
#include "tools/ampkit/train/run_checkpoint.hpp"

#include <utility>

#include "ampkit/core/error.hpp"

namespace ampkit::tools::train {

void save_run_checkpoint(const std::string& path, const TrainCheckpoint& checkpoint) {
  ampkit::train::Checkpoint c = checkpoint;
  c.metadata.insert(c.metadata.begin(), {kConfigMetadataKey, config_to_json(checkpoint.config)});
  ampkit::train::save_checkpoint(path, c);
}

TrainCheckpoint run_checkpoint_from(ampkit::train::Checkpoint checkpoint, std::string_view what) {
  const std::string* config = checkpoint.meta(kConfigMetadataKey);
  if (!config) throw Error(detail::concat(what, ": the metadata lacks \"config\"; not a checkpoint of ampkit train"));
  if (checkpoint.vocabulary.size() == 0) throw Error(detail::concat(what, ": the metadata \"vocabulary\" is empty"));
  TrainCheckpoint c;
  c.config = config_from_json(*config, what);
  static_cast<ampkit::train::Checkpoint&>(c) = std::move(checkpoint);
  return c;
}

TrainCheckpoint load_run_checkpoint(const std::string& path) {
  return run_checkpoint_from(ampkit::train::load_checkpoint(path), "checkpoint '" + path + "'");
}

}  // namespace ampkit::tools::train
