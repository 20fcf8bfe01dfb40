// The argument checks of train::Trainer (train layer, internal): its configuration, and the
// forms of a model graph given to Trainer::from_graph. Called by trainer.cpp before anything is
// built; each throws ampkit::Error naming the field or value, what was expected and what was given.
#pragma once

#include <cstdint>

#include "ampkit/train/models.hpp"
#include "ampkit/train/trainer.hpp"

namespace ampkit::train {

void check_config(const TrainerConfig& c);
// The named values exist and have the forms the trainer binds, and the parameter list is the
// graph's parameters, each once.
void check_model_graph(const ModelGraph& m, std::int64_t batch);

}  // namespace ampkit::train
