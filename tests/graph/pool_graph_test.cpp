// Tests of the graph's pooling ops (src/graph/ops/pool.cpp): the gradient of a Pool2d graph
// (max with overlapping padded windows, average) against finite differences; the backward node
// is emitted with its attributes, tagged backward and named in the dump; a bad window is refused
// at build time naming the node; the graph's bits equal the op's.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ampkit/graph/builder.hpp"
#include "ampkit/ops/pool2d.hpp"
#include "tests/graph/graph_test_support.hpp"

namespace ampkit::graph {
namespace {

using testing::TrainGraph;

struct PoolGraph {
  Graph g;
  ValueId x = kNoValue, y = kNoValue, loss = kNoValue;
};

// x [2, 3, 6, 6] -> pool -> y [2, 3, OH, OW] read as logits over its last dim.
PoolGraph make(const Pool2dParams& q) {
  PoolGraph p;
  Builder b(p.g);
  p.x = b.input("x", DType::f32, {2, 3, 6, 6});
  p.y = b.pool2d(p.x, q, "pool");
  const std::vector<std::int64_t> ys = p.g.value(p.y).shape;
  const ValueId targets = b.input("targets", DType::i32, {ys[0], ys[1], ys[2]});
  p.loss = b.softmax_cross_entropy(p.y, targets, "ce");
  return p;
}

TEST(GraphPool2d, GradientsMatchFiniteDifferences) {
  for (const Pool2dParams& q : {Pool2dParams{PoolKind::max, 3, 3, 2, 2, 1, 1}, Pool2dParams{PoolKind::average}}) {
    PoolGraph p = make(q);
    const std::int64_t ow = p.g.value(p.y).shape[3];
    TrainGraph t(p.g, p.loss, {p.x}, {});
    const auto seed = ampkit::testing::fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    t.fill(seed, 1.0, static_cast<std::int32_t>(ow));
    // Distinct values 0.05 apart, shuffled: the finite differences' steps (<= 1e-2) never change
    // which element is a window's largest.
    std::vector<int> order(2 * 3 * 6 * 6);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t i = 0; i < order.size(); ++i) t.set(p.x, static_cast<std::int64_t>(i), 0.05 * (order[i] - 54));
    testing::expect_gradients_match_fd(t, {p.x});
  }
}

TEST(GraphPool2d, TheBackwardNodeIsTaggedAndDumped) {
  PoolGraph p = make({PoolKind::max, 3, 3, 2, 2, 1, 1});
  TrainGraph t(p.g, p.loss, {p.x}, {});
  const std::string text = dump(t.graph());
  EXPECT_NE(text.find("= Pool2d(%"), std::string::npos) << text;
  EXPECT_NE(text.find("Pool2dBackward(%"), std::string::npos) << text;
  EXPECT_NE(text.find("kind=max kernel=3x3 stride=2x2 pad=1x1"), std::string::npos) << text;
  bool found = false;
  for (const Node& n : t.graph().nodes)
    if (n.op == OpKind::Pool2dBackward) {
      found = true;
      EXPECT_TRUE(n.attrs.backward) << "the backward node runs under the BackwardPassGuard";
      EXPECT_EQ(n.attrs.pool.kernel_h, 3);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(t.graph().value(p.y).shape, (std::vector<std::int64_t>{2, 3, 3, 3}));
}

TEST(GraphPool2d, TheGraphGivesTheOpsBits) {
  PoolGraph p = make({PoolKind::average, 2, 2, 2, 2, 0, 0});
  TrainGraph t(p.g, p.loss, {p.x}, {});
  t.fill(ampkit::testing::fresh_seed(), 1.0, 3);
  t.forward();  // y is read before the backward reuses its memory
  std::vector<float> x(2 * 3 * 6 * 6), y(2 * 3 * 3 * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(t.get(p.x, static_cast<std::int64_t>(i)));
  pool2d_forward(TensorView(x.data(), DType::f32, {2, 3, 6, 6}), TensorView(y.data(), DType::f32, {2, 3, 3, 3}),
                 {PoolKind::average, 2, 2, 2, 2, 0, 0});
  for (std::size_t i = 0; i < y.size(); ++i) EXPECT_EQ(t.value(p.y, static_cast<std::int64_t>(i)), y[i]) << i;
}

TEST(GraphPool2d, ABadWindowIsRefusedNamingTheNode) {
  Graph g;
  Builder b(g);
  const ValueId x = b.input("x", DType::f32, {1, 2, 4, 4});
  testing::expect_error(
      [&] {
        b.pool2d(x, {PoolKind::max, 2, 2, 2, 2, 3, 0}, "p");
      },
      "(Pool2d 'p'): pool2d_forward: params.pad_h must be in [0, kernel_h / 2 = 1], but got 3");
  const ValueId flat = b.input("flat", DType::f32, {2, 16});
  testing::expect_error([&] { b.pool2d(flat, {}, "q"); }, "pool2d_forward: x must have rank 4");
}

}  // namespace
}  // namespace ampkit::graph
