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
// scale. ZeRO-1 (TrainerConfig::zero): each bucket is reduce-scattered instead (rank r gets the
// sums of chunk r of every bucket: its shard), the optimizer updates the shard's slices of the
// parameters with the shard's moments, and the updated slices are all-gathered. The sums are the
// same rank-order sums, so the weights equal plain data parallelism's bit for bit. With one rank
// it holds nothing and costs nothing.
class GradientAveraging {
 public:
  // Bucket launches after running nodes [previous end, end): buckets [first, last).
  struct Launch {
    int end = 0, first = 0, last = 0;
  };

  // A piece of one parameter inside one rank's shard: elements [offset, offset + count) of
  // parameter `param`, at flat_[flat] (its summed gradient) and, on the owning rank under ZeRO-1,
  // at state [state, state + count) of the shard's moments.
  struct Slice {
    int param = 0;
    std::size_t offset = 0, count = 0, flat = 0, state = 0;
  };

  // comm may be null (one process). `params`: one per parameter, in model order. bucket_bytes: a
  // bucket is closed once it holds at least that many bytes of fp32 gradient (0: one bucket).
  // overlap false: every bucket is launched after the whole graph ran (on a GPU, whose gradients
  // come back to the host after the run). node_count: the graph's nodes. zero: ZeRO-1 (buckets
  // reduce-scattered; this rank updates its shard, whose moments `moments` (0, 1 or 2 f32
  // buffers: m, then v) this object holds).
  void bind(dist::Communicator* comm, std::span<const GradientSource> params, std::size_t bucket_bytes, bool overlap,
            int node_count, bool zero, int moments);

  bool active() const { return comm_ != nullptr && comm_->size() > 1; }
  double ranks() const { return active() ? static_cast<double>(comm_->size()) : 1.0; }

  // Where the step launches buckets, in node order (only when active()).
  std::span<const Launch> launches() const { return launches_; }

  // Converts bucket b's gradients into the flat buffer and submits its all_reduce. `grads`: one
  // per parameter in model order; `accs` empty, or the gradient accumulators of micro-batching
  // (each then gets its gradient added first, and the sum is what is reduced). `loss`: the
  // rank's loss, sent with the last bucket.
  void launch(int b, std::span<const TensorView> grads, std::span<const TensorView> accs, double loss);

  // Waits for every bucket; returns the ranks' mean loss. The sums are then in views() (under
  // ZeRO-1: the sums of this rank's shard only). Under ZeRO-1 also the global norm of the sums,
  // grad_norm() = sqrt(n_0^2 + n_1^2 + ... + n_(N-1)^2) in double, in rank order, n_r =
  // global_grad_norm of shard r's slices in flat order (all-gathered with the ranks' losses): the
  // same squares as plain data parallelism's global_grad_norm over all gradients, summed in
  // another order (docs/TRAIN.md "Scaling out" bounds the difference).
  double finish();
  double grad_norm() const { return norm_; }

  bool zero() const { return zero_; }
  // ZeRO-1: this rank's shard (the slices in flat order) and its moments (m, v).
  std::span<const Slice> shard() const { return slices_[static_cast<std::size_t>(rank_)]; }
  float* moment(int k) { return moments_[static_cast<std::size_t>(k)].data(); }
  // ZeRO-1, after the shard's update: every rank's updated slices of the parameters
  // (`params[i]`: parameter i's fp32 values, numel elements) reach every rank (all_gather).
  void gather_parameters(std::span<float* const> params);
  // ZeRO-1: the full moments `full[k][i]` (moment k of parameter i) from every rank's shard
  // (all_gather; every rank must call it); full[k] points at the per-parameter vectors of
  // moment k. And back, one tensor at a time: this rank's slices of moment k of parameter
  // `param` from `values` (the parameter's full numel floats).
  void gather_moments(std::span<std::vector<float>* const> full);
  void load_moment(int k, int param, const float* values);
  // Bytes of optimizer state this rank holds for the step (ZeRO-1: the shard's moments).
  std::size_t moment_bytes() const;

  // The summed gradients, one fp32 view per parameter in model order.
  std::span<const TensorView> views() const { return views_; }

  CommunicationStats times() const { return times_; }

 private:
  struct Bucket {
    std::size_t begin = 0, count = 0;  // elements of flat_ (a multiple of the ranks: padded)
    std::vector<int> params;           // model indices
  };
  void copy_shard_to_flat(const float* const* src, bool state);
  void all_gather_buckets();

  dist::Communicator* comm_ = nullptr;  // null: one process
  int rank_ = 0, size_ = 1;
  bool zero_ = false;
  double loss_ = 0.0, norm_ = 0.0;
  std::size_t loss_slot_ = 0;                         // the loss's element of flat_ (the last bucket's last)
  std::vector<double> norms_;                         // finish(): per shard
  std::vector<std::int32_t> gathered_;                // finish() under ZeRO-1: every rank's norm and loss
  std::vector<std::size_t> offsets_;                  // per parameter: its place in flat_
  std::vector<std::vector<Slice>> slices_;            // per rank
  std::vector<std::vector<TensorView>> shard_views_;  // per rank: views of its slices' sums
  std::vector<std::vector<float>> moments_;           // ZeRO-1: this shard's m, v
  std::unique_ptr<dist::CollectiveQueue> queue_;
  std::vector<float> flat_;        // every parameter's gradient in bucket order, then the loss
  std::vector<TensorView> views_;  // views of flat_, one per parameter (model order)
  std::vector<Bucket> buckets_;
  std::vector<Launch> launches_;
  CommunicationStats times_;
};

}  // namespace ampkit::train
