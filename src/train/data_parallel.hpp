// Data parallelism of the trainer (train layer, internal; used by src/train/trainer.cpp): the
// averaging of the gradients and the loss over the ranks of a dist::Communicator
// (docs/TRAIN.md "Scaling out", docs/DISTRIBUTED.md). Kept apart from the trainer's step so the
// communication plan is read and tested on its own.
#pragma once

#include <span>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/dist/communicator.hpp"

namespace ampkit::train {

// With more than one rank, the step's gradients (each converted to fp32) and its loss are packed
// into one flat buffer, summed over the ranks by one all_reduce (the communicator's fixed rank
// order: the same bits on every rank) and the optimizer reads the sums through views(); the 1/N
// of the mean is folded into the optimizer's gradient scale. With one rank it holds nothing and
// costs nothing.
class GradientAveraging {
 public:
  // comm may be null (one process). `grads`: one view per parameter, in model order (their
  // shapes size the flat buffer).
  void bind(dist::Communicator* comm, std::span<const TensorView> grads);

  bool active() const { return comm_ != nullptr && comm_->size() > 1; }
  double ranks() const { return active() ? static_cast<double>(comm_->size()) : 1.0; }

  // Sums `grads` (one per parameter, in bind's order) and `loss` over the ranks; returns the
  // ranks' mean loss. Only when active().
  double reduce(std::span<const TensorView> grads, double loss);

  // The summed gradients, one fp32 view per parameter.
  std::span<const TensorView> views() const { return views_; }

 private:
  dist::Communicator* comm_ = nullptr;  // null: one process
  std::vector<float> flat_;             // every parameter's gradient in model order, then the loss
  std::vector<TensorView> views_;       // views of flat_, one per parameter
};

}  // namespace ampkit::train
