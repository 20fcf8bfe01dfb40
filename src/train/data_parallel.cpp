// Data parallelism of the trainer: see data_parallel.hpp.
#include "train/data_parallel.hpp"

#include "ampkit/ops/convert.hpp"

namespace ampkit::train {

void GradientAveraging::bind(dist::Communicator* comm, std::span<const TensorView> grads) {
  comm_ = comm;
  flat_.clear();
  views_.clear();
  if (!active()) return;
  std::size_t total = 0;
  for (const TensorView& g : grads) total += static_cast<std::size_t>(g.numel());
  flat_.assign(total + 1, 0.0f);
  std::size_t offset = 0;
  for (const TensorView& g : grads) {
    views_.emplace_back(flat_.data() + offset, DType::f32, g.shape.data(), g.rank);
    offset += static_cast<std::size_t>(g.numel());
  }
}

double GradientAveraging::reduce(std::span<const TensorView> grads, double loss) {
  for (std::size_t i = 0; i < grads.size(); ++i) convert(grads[i], views_[i]);
  flat_.back() = static_cast<float>(loss);
  comm_->all_reduce(flat_.data(), flat_.size(), DType::f32, dist::ReduceOp::sum);
  return static_cast<double>(flat_.back()) / ranks();
}

}  // namespace ampkit::train
