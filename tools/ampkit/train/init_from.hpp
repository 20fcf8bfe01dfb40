// `ampkit train --init-from FILE.safetensors` (tools layer, train/): a run's starting weights
// from another run's checkpoint or any safetensors file of the same model (docs/TRAIN.md).
#pragma once

#include <string>

#include "ampkit/train/corpus.hpp"
#include "ampkit/train/trainer.hpp"

namespace ampkit::tools::train {

/// Sets the trainer's parameters (weights only: no optimizer state, step or data state) from
/// the safetensors file `path`. Its tensors whose names hold no ':' must be exactly the model's
/// parameters: every one present, none extra, each F32 and of the parameter's shape; the ones
/// with ':' (an ampkit checkpoint's training state) are ignored. When the file has ampkit's
/// "vocabulary" metadata it must equal `vocabulary`. Throws ampkit::Error "--init-from '<path>':
/// ..." naming the first problem; the trainer is left untouched then (all checks come first).
void init_weights_from(ampkit::train::Trainer& trainer, const std::string& path,
                       const ampkit::train::Vocabulary& vocabulary);

}  // namespace ampkit::tools::train
