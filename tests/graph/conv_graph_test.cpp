// Tests of the graph's convolution ops (src/graph/ops/conv.cpp): the gradients of x, w and b of
// a Conv2d graph against finite differences; an f16 graph's Conv2d runs the convolution policy's
// forward mode and its Conv2dBackward (tagged backward, under the BackwardPassGuard) the backward
// mode, counted in the convolution's own counters; the dump names the attributes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ampkit/graph/builder.hpp"
#include "ampkit/numerics/conv2d_policy.hpp"
#include "tests/graph/graph_test_support.hpp"
#include "tests/numerics/policy_test_support.hpp"

namespace ampkit::graph {
namespace {

using testing::TrainGraph;

struct ConvGraph {
  Graph g;
  ValueId x = kNoValue, w = kNoValue, b = kNoValue, loss = kNoValue;
};

// x [2, 2, 5, 5] -> conv 3x3 pad 1 (3 filters) -> y [2, 3, 5, 5], logits over the last dim.
ConvGraph make(DType compute) {
  ConvGraph c;
  Builder b(c.g, {compute});
  c.x = b.input("x", compute, {2, 2, 5, 5});
  c.w = b.parameter("w", {3, 2, 3, 3});
  c.b = b.parameter("b", {3});
  Conv2dParams q;
  q.pad_h = q.pad_w = 1;
  const ValueId y = b.conv2d(c.x, c.w, c.b, q, "conv");
  const ValueId targets = b.input("targets", DType::i32, {2, 3, 5});
  c.loss = b.softmax_cross_entropy(y, targets, "ce");
  return c;
}

TEST(GraphConv2d, GradientsMatchFiniteDifferences) {
  ConvGraph c = make(DType::f32);
  TrainGraph t(c.g, c.loss, {c.x}, {});
  const auto seed = ampkit::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  t.fill(seed, 0.5, 5);
  testing::expect_gradients_match_fd(t, {c.x, c.w, c.b});
}

TEST(GraphConv2d, F16NodesTakeTheConvolutionPolicysModeOfTheirPass) {
  ampkit::testing::PolicyEnvScope env;
  ConvGraph c = make(DType::f16);
  TrainGraph t(c.g, c.loss, {c.x}, {});  // dx too: both backward calls run
  t.fill(3, 0.5, 5);
  reset_conv2d_fp16_counters();
  t.run();
  // Unset: original (exact on the cpu model) forward, alt backward (data and weight).
  Conv2dFp16Counters n = conv2d_fp16_counters();
  EXPECT_EQ(n.exact.calls, 1);
  EXPECT_EQ(n.alt.calls, 2);
  EXPECT_FALSE(in_backward_pass());
  set_conv_fp16_alt_impl(AltImplChoice::original);
  reset_conv2d_fp16_counters();
  t.run();
  n = conv2d_fp16_counters();
  EXPECT_EQ(n.exact.calls, 3);
  EXPECT_EQ(n.alt.calls, 0);
  bool tagged = false;
  for (const Node& node : t.graph().nodes)
    if (node.op == OpKind::Conv2dBackward) tagged = node.attrs.backward;
  EXPECT_TRUE(tagged);
  const std::string text = dump(t.graph());
  EXPECT_NE(text.find("Conv2dBackward(%"), std::string::npos) << text;
  EXPECT_NE(text.find("stride=1x1 pad=1x1 dilation=1x1 groups=1"), std::string::npos) << text;
}

}  // namespace
}  // namespace ampkit::graph
