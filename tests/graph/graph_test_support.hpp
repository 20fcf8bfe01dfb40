// Helpers of the graph tests: a training graph built from a forward graph (autodiff, passes,
// executor) with its external values held in test buffers, filled from a seeded generator;
// loss-only runs for finite differences; gradient read-back.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
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
      : TrainGraph(
            std::move(forward), loss, std::move(wrt), [&](Graph& g) { run_passes(g, passes); }, 0) {}

  /// As above, with `passes` applied to the differentiated graph instead of run_passes (the
  /// graph is tagged first; passes in any order, say).
  static TrainGraph with_passes(Graph forward, ValueId loss, std::vector<ValueId> wrt,
                                const std::function<void(Graph&)>& passes) {
    return TrainGraph(std::move(forward), loss, std::move(wrt), passes, 0);
  }

 private:
  TrainGraph(Graph forward, ValueId loss, std::vector<ValueId> wrt, const std::function<void(Graph&)>& passes, int)
      : wrt_(std::move(wrt)) {
    grads_ = build_backward(forward, loss, wrt_);
    tag_backward(forward);
    passes(forward);
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

 public:
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
    std::memcpy(tmp.data(),
                static_cast<const unsigned char*>(t.data) + i * static_cast<std::int64_t>(dtype_size(t.dtype)),
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

/// The derivative of the loss along element e of v from central differences with Richardson
/// extrapolation, (4 D(h/2) - D(h)) / 3, whose truncation error is O(h^4): plain central
/// differences (error ~h^2 f'''/6) failed ~5% of random seeds on the tiny GPT, where a 4-wide
/// LayerNorm of a nearly constant row has large higher derivatives. h cannot shrink instead: the
/// loss is f32 and the Cast test rounds through bf16, and at h = 5e-3 that rounding failed 6 runs
/// in 1,500; at h = 1e-2 none failed in 1,000. The steps are measured after storing, so rounding
/// x +- h to the value's dtype does not bias the quotient.
inline double finite_difference(TrainGraph& t, ValueId v, std::int64_t e, double h = 1e-2) {
  const double orig = t.get(v, e);
  auto central = [&](double step) {
    t.set(v, e, orig + step);
    const double xp = t.get(v, e), lp = t.forward();
    t.set(v, e, orig - step);
    const double xm = t.get(v, e), lm = t.forward();
    t.set(v, e, orig);
    return (lp - lm) / (xp - xm);
  };
  const double coarse = central(h), fine = central(h / 2);
  return (4.0 * fine - coarse) / 3.0;
}

/// Every gradient element of `values` against finite_difference(), within atol 3e-4 (the
/// estimate's own error, above) + rtol 1e-2. Also asserts that some gradient is far above atol,
/// so a missing factor cannot hide below the tolerance.
inline void expect_gradients_match_fd(TrainGraph& t, const std::vector<ValueId>& values) {
  constexpr double atol = 3e-4, rtol = 1e-2;
  t.run();
  // Read every gradient first: the forward runs below reuse the arena.
  std::vector<std::vector<double>> gradients;
  for (ValueId v : values) gradients.push_back(t.gradient(v));
  double largest = 0.0;
  for (std::size_t k = 0; k < values.size(); ++k) {
    for (std::size_t i = 0; i < gradients[k].size(); ++i) {
      const double fd = finite_difference(t, values[k], static_cast<std::int64_t>(i));
      largest = std::max(largest, std::fabs(gradients[k][i]));
      EXPECT_NEAR(gradients[k][i], fd, atol + rtol * std::fabs(fd))
          << "d loss / d " << t.graph().value(values[k]).name << "[" << i << "]";
    }
  }
  EXPECT_GT(largest, 30 * atol) << "gradients too small for the check to mean anything";
}

}  // namespace ampkit::graph::testing
