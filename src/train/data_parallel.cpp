// Data parallelism of the trainer: see data_parallel.hpp.
#include "train/data_parallel.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"

namespace ampkit::train {

void GradientAveraging::bind(dist::Communicator* comm, std::span<const GradientSource> params, std::size_t bucket_bytes,
                             bool overlap, int node_count) {
  comm_ = comm;
  queue_.reset();
  flat_.clear();
  views_.clear();
  buckets_.clear();
  launches_.clear();
  times_ = {};
  if (!active()) return;
  // The parameters in the order their gradients are produced (model order among equals).
  std::vector<int> order(params.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return params[a].producer < params[b].producer; });
  std::size_t offset = 0;
  std::vector<std::size_t> offsets(params.size());
  for (int i : order) {
    if (buckets_.empty() || (bucket_bytes > 0 && buckets_.back().count * sizeof(float) >= bucket_bytes))
      buckets_.push_back({offset, 0, {}});
    const auto n = static_cast<std::size_t>(params[i].grad.numel());
    offsets[i] = offset;
    offset += n;
    buckets_.back().count += n;
    buckets_.back().params.push_back(i);
  }
  if (buckets_.empty()) buckets_.push_back({0, 0, {}});
  buckets_.back().count += 1;  // the loss
  flat_.assign(offset + 1, 0.0f);
  for (std::size_t i = 0; i < params.size(); ++i)
    views_.emplace_back(flat_.data() + offsets[i], DType::f32, params[i].grad.shape.data(), params[i].grad.rank);
  // A bucket is launched after the node that produces the last of its gradients.
  for (int b = 0; b < static_cast<int>(buckets_.size()); ++b) {
    int end = node_count;
    if (overlap && !buckets_[b].params.empty()) end = params[buckets_[b].params.back()].producer + 1;
    if (!launches_.empty() && launches_.back().end == end)
      launches_.back().last = b + 1;
    else
      launches_.push_back({end, b, b + 1});
  }
  times_.buckets = static_cast<int>(buckets_.size());
  queue_ = std::make_unique<dist::CollectiveQueue>(*comm_);
}

void GradientAveraging::launch(int b, std::span<const TensorView> grads, std::span<const TensorView> accs,
                               double loss) {
  const Bucket& bucket = buckets_[static_cast<std::size_t>(b)];
  for (int i : bucket.params) {
    const auto k = static_cast<std::size_t>(i);
    if (accs.empty()) {
      convert(grads[k], views_[k]);
    } else {
      add_accumulate(grads[k], accs[k]);
      convert(accs[k], views_[k]);
    }
  }
  if (b + 1 == static_cast<int>(buckets_.size())) flat_.back() = static_cast<float>(loss);
  queue_->all_reduce(flat_.data() + bucket.begin, bucket.count, DType::f32, dist::ReduceOp::sum);
}

double GradientAveraging::finish() {
  const auto start = std::chrono::steady_clock::now();
  queue_->wait();
  const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
  times_.waited_s += waited.count();
  times_.collective_s = queue_->busy_seconds();
  return static_cast<double>(flat_.back()) / ranks();
}

}  // namespace ampkit::train
