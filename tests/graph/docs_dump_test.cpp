// The small training graph of docs/GRAPH.md, before and after the passes (graph layer): checks
// what the doc says about it, and prints both dumps when AMPKIT_PRINT_GRAPH_DUMPS is set (that
// output is what the doc shows).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "ampkit/graph/autodiff.hpp"
#include "ampkit/graph/builder.hpp"
#include "ampkit/graph/passes.hpp"
#include "ampkit/graph/verify.hpp"

namespace ampkit::graph {
namespace {

TEST(GraphDocs, SmallTrainingGraphBeforeAndAfterThePasses) {
  // x [4, 8] bf16 -> fc1 (16) -> GELU -> fc2 (4) -> softmax CE; bf16 autocast, fp32 masters.
  Graph g;
  Builder b(g, {DType::bf16});
  const ValueId x = b.input("x", DType::bf16, {4, 8});
  const ValueId targets = b.input("targets", DType::i32, {4});
  const ValueId w1 = b.parameter("fc1.w", {16, 8});
  const ValueId b1 = b.parameter("fc1.b", {16});
  const ValueId w2 = b.parameter("fc2.w", {4, 16});
  const ValueId b2 = b.parameter("fc2.b", {4});
  const ValueId h = b.gelu(b.linear(x, w1, b1, "fc1"), GeluVariant::tanh, "act");
  const ValueId loss = b.softmax_cross_entropy(b.linear(h, w2, b2, "fc2"), targets, "ce");
  build_backward(g, loss);
  tag_backward(g);
  verify(g);
  const std::string before = dump(g);
  run_passes(g);
  const std::string after = dump(g);
  if (std::getenv("AMPKIT_PRINT_GRAPH_DUMPS"))
    std::cout << "---- before the fusion passes\n" << before << "---- after\n" << after;
  EXPECT_NE(before.find("= Gelu("), std::string::npos);
  EXPECT_NE(before.find("= GeluBackward("), std::string::npos);
  EXPECT_EQ(after.find("Gelu"), std::string::npos);
  EXPECT_NE(after.find(") gelu=tanh  // fc1"), std::string::npos) << after;
  EXPECT_NE(after.find("below_gelu=tanh [bwd]  // fc2.bwd"), std::string::npos) << after;
  // Two weight-gradient casts gone; the forward casts of the masters stay.
  int bwd_casts = 0, fwd_casts = 0;
  for (const Node& n : g.nodes) (n.attrs.backward ? bwd_casts : fwd_casts) += n.op == OpKind::Cast;
  EXPECT_EQ(bwd_casts, 0);
  EXPECT_EQ(fwd_casts, 2);
}

}  // namespace
}  // namespace ampkit::graph
