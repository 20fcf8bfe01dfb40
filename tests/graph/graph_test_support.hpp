// Helpers of the graph tests: a training graph built from a forward graph (autodiff, passes,
// executor) with its external values held in test buffers, filled from a seeded generator;
// loss-only runs for finite differences; gradient read-back.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/autodiff.hpp"
#include "ampkit/graph/executor.hpp"
#include "ampkit/graph/passes.hpp"
#include "support/test_support.hpp"

namespace ampkit::graph::testing {

/// Runs call, expects an ampkit::Error whose message contains `fragment`.
template <typename Call>
inline void expect_error(Call call, const char* fragment) {
  try {
    call();
    ADD_FAILURE() << "no error; expected '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}


using ampkit::testing::Buffer;

/// A forward graph differentiated, passed and planned, with every external value in a Buffer.
class TrainGraph {
 public:
  /// `classes` bounds the i32 inputs (targets, ids) drawn by fill().
  TrainGraph(Graph forward, ValueId loss, std::vector<ValueId> wrt, PassOptions passes)
      : wrt_(std::move(wrt)) {
    grads_ = build_backward(forward, loss, wrt_);
    run_passes(forward, passes);
    loss_ = loss;
    exec_ = std::make_unique<Executor>(std::move(forward));
    const Graph& g = exec_->graph();
    for (std::size_t v = 0; v < g.values.size(); ++v)
      if (exec_->plan().first[v] < 0 && exec_->plan().last[v] >= 0) {
        const Value& val = g.values[v];
        buffers_.emplace(val.id, Buffer(val.dtype, val.numel()));
        exec_->bind(val.id, buffers_.at(val.id).data());
      }
    set(grads_.loss_seed, 0, 1.0);
  }

  /// Parameters and float inputs ~ N(0, scale); i32 inputs uniform in [0, int_bound).
  void fill(std::uint64_t seed, double scale, std::int32_t int_bound) {
    std::mt19937_64 rng(seed);
    for (auto& [id, buf] : buffers_) {
      const Value& val = exec_->graph().value(id);
      if (id == grads_.loss_seed) continue;
      if (val.dtype == DType::i32) {
        std::uniform_int_distribution<std::int32_t> dist(0, int_bound - 1);
        for (std::int64_t i = 0; i < buf.size(); ++i) {
          const std::int32_t t = dist(rng);
          std::memcpy(buf.bytes.data() + 4 * i, &t, 4);
        }
      } else {
        buf.fill_normal(rng, 0.0, scale);
      }
    }
  }

  Buffer& buffer(ValueId v) { return buffers_.at(v); }
  double get(ValueId v, std::int64_t i) { return buffers_.at(v).get(i); }
  void set(ValueId v, std::int64_t i, double x) { buffers_.at(v).set(i, x); }

  /// Forward only; returns the loss.
  double forward() {
    exec_->run(0, exec_->graph().yield_index());
    return value(loss_, 0);
  }
  /// Forward and backward; returns the loss.
  double run() {
    exec_->run();
    return value(loss_, 0);
  }
  /// Element i of any value (arena or external), widened to double.
  double value(ValueId v, std::int64_t i) const {
    const TensorView t = exec_->view(v);
    Buffer tmp(t.dtype, 1);
    std::memcpy(tmp.data(), static_cast<const unsigned char*>(t.data) + i * static_cast<std::int64_t>(dtype_size(t.dtype)),
                dtype_size(t.dtype));
    return tmp.get(0);
  }
  /// The gradient of v (after run()), as doubles.
  std::vector<double> gradient(ValueId v) const {
    const ValueId d = grads_.of(v);
    EXPECT_NE(d, kNoValue) << "no gradient for %" << v;
    std::vector<double> out;
    if (d == kNoValue) return out;
    const std::int64_t n = exec_->graph().value(d).numel();
    for (std::int64_t i = 0; i < n; ++i) out.push_back(value(d, i));
    return out;
  }

  Executor& executor() { return *exec_; }
  const Graph& graph() const { return exec_->graph(); }
  const GradientMap& gradients() const { return grads_; }
  ValueId loss() const { return loss_; }

 private:
  std::vector<ValueId> wrt_;
  GradientMap grads_;
  ValueId loss_ = kNoValue;
  std::unique_ptr<Executor> exec_;
  std::map<ValueId, Buffer> buffers_;
};

}  // namespace ampkit::graph::testing
