// Gradients of the graph runtime against central finite differences (graph layer): tiny f32
// graphs for every differentiable op (Linear with and without bias, GELU tanh/erf, fused and
// unfused, LayerNorm, RMSNorm, residual Add, a weight read twice, Cast, softmax cross-entropy),
// each gradient of every parameter and input element checked through the executor; plus the
// structure autodiff emits (Yield contents, gradient sums).
#include <gtest/gtest.h>

#include <cmath>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/builder.hpp"
#include "graph/graph_test_support.hpp"

namespace ampkit::graph {
namespace {

using testing::expect_gradients_match_fd;
using testing::TrainGraph;

struct Case {
  Graph g;
  ValueId loss = kNoValue;
  std::vector<ValueId> wrt;      // inputs differentiated too
  std::vector<ValueId> checked;  // values whose gradients are compared
};

TrainGraph make(Case& c, bool fuse, std::int32_t classes, std::uint64_t seed, double scale = 1.0) {
  TrainGraph t(c.g, c.loss, c.wrt, {.fuse = fuse});
  t.fill(seed, scale, classes);
  return t;
}

TEST(GraphAutodiff, LinearWithAndWithoutBias) {
  for (bool bias : {true, false}) {
    Case c;
    Builder b(c.g);
    const ValueId x = b.input("x", DType::f32, {2, 3, 4});
    const ValueId targets = b.input("targets", DType::i32, {2, 3});
    const ValueId w = b.parameter("w", {5, 4});
    const ValueId bb = bias ? b.parameter("b", {5}) : kNoValue;
    c.loss = b.softmax_cross_entropy(b.linear(x, w, bb, "fc"), targets, "ce");
    c.wrt = {x};
    c.checked = {x, w};
    if (bias) c.checked.push_back(bb);
    const auto seed = ampkit::testing::fresh_seed();
    SCOPED_TRACE(seed);
    TrainGraph t = make(c, true, 5, seed);
    expect_gradients_match_fd(t, c.checked);
  }
}

// x -> fc1 -> GELU -> fc2 -> CE, fused (one GELU_AUX_BIAS GEMM, DGELU_BGRAD) and unfused.
TEST(GraphAutodiff, MlpGeluFusedAndUnfused) {
  for (GeluVariant variant : {GeluVariant::tanh, GeluVariant::erf})
    for (bool fuse : {false, true}) {
      Case c;
      Builder b(c.g);
      const ValueId x = b.input("x", DType::f32, {3, 4});
      const ValueId targets = b.input("targets", DType::i32, {3});
      const ValueId w1 = b.parameter("fc1.w", {6, 4}), b1 = b.parameter("fc1.b", {6});
      const ValueId w2 = b.parameter("fc2.w", {5, 6}), b2 = b.parameter("fc2.b", {5});
      const ValueId h = b.gelu(b.linear(x, w1, b1, "fc1"), variant, "act");
      c.loss = b.softmax_cross_entropy(b.linear(h, w2, b2, "fc2"), targets, "ce");
      c.wrt = {x};
      c.checked = {x, w1, b1, w2, b2};
      const auto seed = ampkit::testing::fresh_seed();
      SCOPED_TRACE(::testing::Message() << "seed " << seed << " fuse " << fuse << " erf "
                                        << (variant == GeluVariant::erf));
      // Scale 0.5 keeps the logits O(1): at scale 1 about one seed in 600 saturated the softmax
      // and left every gradient below the meaningful-size guard.
      TrainGraph t = make(c, fuse, 5, seed, 0.5);
      int gelu_nodes = 0;
      for (const Node& n : t.graph().nodes) gelu_nodes += n.op == OpKind::Gelu || n.op == OpKind::GeluBackward;
      EXPECT_EQ(gelu_nodes, fuse ? 0 : 2);
      expect_gradients_match_fd(t, c.checked);
    }
}

TEST(GraphAutodiff, LayerNormAndRmsNorm) {
  for (bool layer : {true, false}) {
    Case c;
    Builder b(c.g);
    const ValueId x = b.input("x", DType::f32, {3, 6});
    const ValueId targets = b.input("targets", DType::i32, {3});
    const ValueId gamma = b.parameter("ln.g", {6});
    const ValueId beta = layer ? b.parameter("ln.b", {6}) : kNoValue;
    const ValueId w = b.parameter("w", {5, 6});
    const ValueId n = layer ? b.layer_norm(x, gamma, beta, 1e-5f, "ln") : b.rms_norm(x, gamma, 1e-5f, "rms");
    c.loss = b.softmax_cross_entropy(b.linear(n, w, kNoValue, "fc"), targets, "ce");
    c.wrt = {x};
    c.checked = {x, gamma, w};
    if (layer) c.checked.push_back(beta);
    const auto seed = ampkit::testing::fresh_seed();
    SCOPED_TRACE(seed);
    TrainGraph t = make(c, true, 5, seed);
    expect_gradients_match_fd(t, c.checked);
  }
}

// x feeds both the residual Add and the Linear (two gradient contributions summed by an Add
// node); the weight w is read by two Linear nodes (its gradient is a sum too); Cast in between.
TEST(GraphAutodiff, ResidualSharedWeightAndCast) {
  Case c;
  Builder b(c.g);
  const ValueId x = b.input("x", DType::f32, {4, 5});
  const ValueId targets = b.input("targets", DType::i32, {4});
  const ValueId w = b.parameter("w", {5, 5}), bias = b.parameter("b", {5});
  const ValueId h = b.linear(x, w, bias, "fc1");
  const ValueId r = b.add(x, b.gelu(h, GeluVariant::tanh, "act"), "residual");
  const ValueId r2 = b.linear(b.cast(r, DType::f32, "copy"), w, kNoValue, "fc2");
  c.loss = b.softmax_cross_entropy(r2, targets, "ce");
  c.wrt = {x};
  c.checked = {x, w, bias};
  const auto seed = ampkit::testing::fresh_seed();
  SCOPED_TRACE(seed);
  TrainGraph t = make(c, true, 5, seed);
  int adds = 0;
  for (const Node& n : t.graph().nodes) adds += n.op == OpKind::Add && n.attrs.backward;
  EXPECT_EQ(adds, 2);  // dx = d(residual) + d(fc1 input); dw = d(fc1) + d(fc2)
  expect_gradients_match_fd(t, c.checked);
}

TEST(GraphAutodiff, YieldHoldsTheSavedForwardValuesAndTheLoss) {
  Graph g;
  Builder b(g);
  const ValueId x = b.input("x", DType::f32, {3, 4});
  const ValueId targets = b.input("targets", DType::i32, {3});
  const ValueId w = b.parameter("w", {5, 4});
  const ValueId logits = b.linear(x, w, kNoValue, "fc");
  const ValueId loss = b.softmax_cross_entropy(logits, targets, "ce");
  const GradientMap m = build_backward(g, loss);
  const int y = g.yield_index();
  ASSERT_EQ(y, 2);
  const std::vector<ValueId> saved = g.nodes[static_cast<std::size_t>(y)].inputs;
  // CE backward reads logits, targets, lse; LinearBackward reads x and w.
  const ValueId lse = g.nodes[1].outputs[1];
  std::vector<ValueId> want{x, targets, w, logits, loss, lse};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(saved, want);
  EXPECT_NE(m.of(w), kNoValue);
  EXPECT_EQ(m.of(x), kNoValue);  // not asked for
  EXPECT_EQ(g.value(m.loss_seed).kind, ValueKind::gradient);
  // The LinearBackward computes only dw (x is an input nobody differentiates).
  const Node& lb = g.nodes.back();
  ASSERT_EQ(lb.op, OpKind::LinearBackward);
  EXPECT_EQ(lb.outputs[0], kNoValue);
  EXPECT_EQ(lb.outputs[1], m.of(w));
  try {
    build_backward(g, loss);
    ADD_FAILURE() << "a second autodiff must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already has a Yield"), std::string::npos);
  }
}

TEST(GraphAutodiff, RefusesANonScalarLoss) {
  Graph g;
  Builder b(g);
  const ValueId x = b.input("x", DType::f32, {3, 4});
  const ValueId w = b.parameter("w", {5, 4});
  const ValueId y = b.linear(x, w, kNoValue, "fc");
  try {
    build_backward(g, y);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must be an f32 [] value"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ampkit::graph
