// Data parallelism of the trainer: see data_parallel.hpp.
#include "train/data_parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/optimizer.hpp"

namespace ampkit::train {

void GradientAveraging::bind(dist::Communicator* comm, std::span<const GradientSource> params, std::size_t bucket_bytes,
                             bool overlap, int node_count, bool zero, int moments) {
  comm_ = comm;
  queue_.reset();
  flat_.clear();
  views_.clear();
  buckets_.clear();
  launches_.clear();
  slices_.clear();
  shard_views_.clear();
  moments_.clear();
  times_ = {};
  if (!active()) return;
  rank_ = comm->rank();
  size_ = comm->size();
  zero_ = zero;
  const auto ranks = static_cast<std::size_t>(size_);
  // The parameters in the order their gradients are produced (model order among equals).
  std::vector<int> order(params.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return params[a].producer < params[b].producer; });
  std::size_t offset = 0;
  offsets_.assign(params.size(), 0);
  for (int i : order) {
    if (buckets_.empty() || (bucket_bytes > 0 && buckets_.back().count * sizeof(float) >= bucket_bytes))
      buckets_.push_back({offset, 0, {}});
    const auto n = static_cast<std::size_t>(params[i].grad.numel());
    offsets_[i] = offset;
    offset += n;
    buckets_.back().count += n;
    buckets_.back().params.push_back(i);
  }
  if (buckets_.empty()) buckets_.push_back({0, 0, {}});
  buckets_.back().count += 1;  // the loss
  // Each bucket padded with zeros to a multiple of the ranks (its N equal chunks are the shards).
  offset = 0;
  for (Bucket& b : buckets_) {
    const std::size_t shift = offset - b.begin;
    b.begin = offset;
    for (int i : b.params) offsets_[i] += shift;
    b.count = (b.count + ranks - 1) / ranks * ranks;
    offset += b.count;
  }
  flat_.assign(offset, 0.0f);
  loss_slot_ = buckets_.back().begin + buckets_.back().count - 1;
  for (std::size_t i = 0; i < params.size(); ++i)
    views_.emplace_back(flat_.data() + offsets_[i], DType::f32, params[i].grad.shape.data(), params[i].grad.rank);
  // The shards: rank r owns chunk r of every bucket; its slices are the parameters' pieces there.
  slices_.assign(ranks, {});
  shard_views_.assign(ranks, {});
  for (std::size_t r = 0; r < ranks; ++r) {
    std::size_t state = 0;
    for (const Bucket& b : buckets_) {
      const std::size_t chunk = b.count / ranks, lo = b.begin + r * chunk, hi = lo + chunk;
      for (int i : b.params) {
        const std::size_t p_lo = offsets_[i], p_hi = p_lo + static_cast<std::size_t>(params[i].grad.numel());
        const std::size_t from = std::max(lo, p_lo), to = std::min(hi, p_hi);
        if (from >= to) continue;
        slices_[r].push_back({i, from - p_lo, to - from, from, state});
        state += to - from;
        const auto count = static_cast<std::int64_t>(to - from);
        shard_views_[r].emplace_back(flat_.data() + from, DType::f32, &count, 1);
      }
    }
    if (zero_ && static_cast<int>(r) == rank_)
      moments_.assign(static_cast<std::size_t>(moments), std::vector<float>(state, 0.0f));
  }
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
  loss_ = loss;
  if (b + 1 == static_cast<int>(buckets_.size())) flat_[loss_slot_] = static_cast<float>(loss);
  if (zero_) {
    const std::size_t chunk = bucket.count / static_cast<std::size_t>(size_);
    float* base = flat_.data() + bucket.begin;
    queue_->reduce_scatter(base, base + static_cast<std::size_t>(rank_) * chunk, chunk, DType::f32,
                           dist::ReduceOp::sum);
  } else {
    queue_->all_reduce(flat_.data() + bucket.begin, bucket.count, DType::f32, dist::ReduceOp::sum);
  }
}

double GradientAveraging::finish() {
  const auto start = std::chrono::steady_clock::now();
  queue_->wait();
  const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
  times_.waited_s += waited.count();
  times_.collective_s = queue_->busy_seconds();
  const auto ranks = static_cast<std::size_t>(size_);
  if (!zero_) return static_cast<double>(flat_[loss_slot_]) / static_cast<double>(size_);
  // Every rank's shard norm and loss, as bits: [the double norm as 2 x i32, the loss's f32 bits].
  std::int32_t mine[3];
  const double own = global_grad_norm(shard_views_[static_cast<std::size_t>(rank_)]);
  const auto own_loss = static_cast<float>(loss_);
  std::memcpy(mine, &own, sizeof own);
  std::memcpy(mine + 2, &own_loss, sizeof own_loss);
  gathered_.resize(3 * ranks);
  comm_->all_gather(mine, gathered_.data(), 3, DType::i32);
  float loss = 0.0f;
  double squares = 0.0;
  for (std::size_t r = 0; r < ranks; ++r) {
    double n = 0.0;
    float l = 0.0f;
    std::memcpy(&n, gathered_.data() + 3 * r, sizeof n);
    std::memcpy(&l, gathered_.data() + 3 * r + 2, sizeof l);
    squares += n * n;
    loss = r == 0 ? l : loss + l;  // the rank-order f32 sum of all_reduce
  }
  norm_ = std::sqrt(squares);
  return static_cast<double>(loss) / static_cast<double>(size_);
}

void GradientAveraging::copy_shard_to_flat(const float* const* src, bool state) {
  for (const Slice& s : shard())
    std::memcpy(flat_.data() + s.flat, state ? src[0] + s.state : src[static_cast<std::size_t>(s.param)] + s.offset,
                s.count * sizeof(float));
}

void GradientAveraging::all_gather_buckets() {
  const std::size_t ranks = static_cast<std::size_t>(size_);
  for (const Bucket& b : buckets_) {
    const std::size_t chunk = b.count / ranks;
    float* base = flat_.data() + b.begin;
    comm_->all_gather(base + static_cast<std::size_t>(rank_) * chunk, base, chunk, DType::f32);
  }
}

void GradientAveraging::gather_parameters(std::span<float* const> params) {
  copy_shard_to_flat(params.data(), false);
  all_gather_buckets();
  for (std::size_t i = 0; i < params.size(); ++i)
    std::memcpy(params[i], flat_.data() + offsets_[i], static_cast<std::size_t>(views_[i].numel()) * sizeof(float));
}

void GradientAveraging::gather_moments(std::span<std::vector<float>* const> full) {
  for (std::size_t k = 0; k < moments_.size(); ++k) {
    const float* src = moments_[k].data();
    copy_shard_to_flat(&src, true);
    all_gather_buckets();
    std::vector<float>* per_param = full[k];
    for (std::size_t i = 0; i < views_.size(); ++i)
      std::memcpy(per_param[i].data(), flat_.data() + offsets_[i], per_param[i].size() * sizeof(float));
  }
}

void GradientAveraging::load_moment(int k, int param, const float* values) {
  for (const Slice& s : shard())
    if (s.param == param)
      std::memcpy(moments_[static_cast<std::size_t>(k)].data() + s.state, values + s.offset, s.count * sizeof(float));
}

std::size_t GradientAveraging::moment_bytes() const {
  std::size_t n = 0;
  for (const std::vector<float>& m : moments_) n += m.size() * sizeof(float);
  return n;
}

}  // namespace ampkit::train
