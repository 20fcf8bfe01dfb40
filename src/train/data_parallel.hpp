// Data parallelism of the trainer (train layer, internal; used by src/train/trainer.cpp): the
// averaging of the gradients and the loss over the ranks of a dist::Communicator in buckets
// launched during the backward pass (docs/TRAIN.md "Scaling out", docs/DISTRIBUTED.md). Kept
// apart from the trainer's step so the communication plan is read and tested on its own.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/dist/collective_queue.hpp"
#include "ampkit/dist/communicator.hpp"
#include "ampkit/train/trainer.hpp"

namespace ampkit::train {

// One parameter as the plan sees it: its gradient view (shape, element count) and the index of
// the graph node that produces the gradient (its last writer: the graph is in SSA form).
struct GradientSource {
  TensorView grad;
  int producer = 0;
};

// With more than one rank, the step's gradients (each converted to fp32) and its loss are packed
// into one flat buffer laid out in buckets: the parameters in the order their gradients are
// produced by the backward pass, cut into buckets of about bucket_bytes. When the last gradient
// of a bucket has been produced, the step converts the bucket's gradients into the buffer and
// hands the bucket to a dist::CollectiveQueue (its own thread), which sums it over the ranks by
// one all_reduce while the backward continues; the loss rides in the last bucket. Each element
// is summed in the communicator's fixed rank order whatever the bucket it sits in, so the bits
// do not depend on the bucketing (the same as one all_reduce after the backward). The optimizer
// reads the sums through views(); the 1/N of the mean is folded into the optimizer's gradient
// scale. With one rank it holds nothing and costs nothing.
class GradientAveraging {
 public:
  // Bucket launches after running nodes [previous end, end): buckets [first, last).
  struct Launch {
    int end = 0, first = 0, last = 0;
  };

  // comm may be null (one process). `params`: one per parameter, in model order. bucket_bytes: a
  // bucket is closed once it holds at least that many bytes of fp32 gradient (0: one bucket).
  // overlap false: every bucket is launched after the whole graph ran (on a GPU, whose gradients
  // come back to the host after the run). node_count: the graph's nodes.
  void bind(dist::Communicator* comm, std::span<const GradientSource> params, std::size_t bucket_bytes, bool overlap,
            int node_count);

  bool active() const { return comm_ != nullptr && comm_->size() > 1; }
  double ranks() const { return active() ? static_cast<double>(comm_->size()) : 1.0; }

  // Where the step launches buckets, in node order (only when active()).
  std::span<const Launch> launches() const { return launches_; }

  // Converts bucket b's gradients into the flat buffer and submits its all_reduce. `grads`: one
  // per parameter in model order; `accs` empty, or the gradient accumulators of micro-batching
  // (each then gets its gradient added first, and the sum is what is reduced). `loss`: the
  // rank's loss, sent with the last bucket.
  void launch(int b, std::span<const TensorView> grads, std::span<const TensorView> accs, double loss);

  // Waits for every bucket; returns the ranks' mean loss. The sums are then in views().
  double finish();

  // The summed gradients, one fp32 view per parameter in model order.
  std::span<const TensorView> views() const { return views_; }

  CommunicationStats times() const { return times_; }

 private:
  struct Bucket {
    std::size_t begin = 0, count = 0;  // elements of flat_
    std::vector<int> params;           // model indices
  };
  dist::Communicator* comm_ = nullptr;  // null: one process
  std::unique_ptr<dist::CollectiveQueue> queue_;
  std::vector<float> flat_;        // every parameter's gradient in bucket order, then the loss
  std::vector<TensorView> views_;  // views of flat_, one per parameter (model order)
  std::vector<Bucket> buckets_;
  std::vector<Launch> launches_;
  CommunicationStats times_;
};

}  // namespace ampkit::train
