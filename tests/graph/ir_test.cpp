// Tests of the graph IR, builder and verifier (graph layer): inferred shapes and dtypes, the text
// dump and dot forms, and one rejected graph per verifier rule, each message naming the node.
#include <gtest/gtest.h>

#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/builder.hpp"
#include "ampkit/graph/verify.hpp"

namespace ampkit::graph {
namespace {

// Expects `call` to throw ampkit::Error whose message contains every fragment.
template <typename Call>
void expect_error(Call call, std::initializer_list<const char*> fragments) {
  try {
    call();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    for (const char* f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << "message '" << e.what() << "' lacks '" << f << "'";
  }
}

struct Mlp {
  Graph g;
  ValueId x, w1, b1, w2, targets, h, loss;
};

// x [4, 3, 8] -> Linear(16) -> Gelu -> Linear(5) -> softmax CE.
void build_mlp(Mlp& m, DType compute = DType::f32) {
  Builder b(m.g, {compute});
  m.x = b.input("x", DType::f32, {4, 3, 8});
  m.targets = b.input("targets", DType::i32, {4, 3});
  m.w1 = b.parameter("fc1.w", {16, 8});
  m.b1 = b.parameter("fc1.b", {16});
  m.w2 = b.parameter("fc2.w", {5, 16});
  const ValueId pre = b.linear(m.x, m.w1, m.b1, "fc1");
  m.h = b.gelu(pre, GeluVariant::tanh, "act");
  const ValueId logits = b.linear(m.h, m.w2, kNoValue, "fc2");
  m.loss = b.softmax_cross_entropy(logits, m.targets, "loss");
  m.g.outputs = {m.loss};
}

TEST(GraphIr, BuilderInfersShapesAndDtypes) {
  Mlp m;
  build_mlp(m);
  verify(m.g);
  ASSERT_EQ(m.g.nodes.size(), 4u);
  EXPECT_EQ(m.g.value(m.h).shape, (std::vector<std::int64_t>{4, 3, 16}));
  const Node& fc2 = m.g.nodes[2];
  EXPECT_EQ(fc2.op, OpKind::Linear);
  EXPECT_EQ(m.g.value(fc2.outputs[0]).shape, (std::vector<std::int64_t>{4, 3, 5}));
  EXPECT_EQ(m.g.value(m.loss).dtype, DType::f32);
  EXPECT_TRUE(m.g.value(m.loss).shape.empty());
  EXPECT_EQ(m.g.producer(m.h), 1);
  EXPECT_EQ(m.g.consumers(m.h), std::vector<int>{2});
}

TEST(GraphIr, AutocastCastsParametersOnceAndKeepsBiasAndLossF32) {
  Graph g;
  Builder b(g, {DType::bf16});
  const ValueId x = b.input("x", DType::bf16, {2, 8});
  const ValueId w = b.parameter("w", {8, 8});
  const ValueId bias = b.parameter("b", {8});
  const ValueId gamma = b.parameter("ln.g", {8});
  const ValueId y1 = b.linear(x, w, bias, "l1");
  const ValueId y2 = b.linear(y1, w, bias, "l2");  // the same weight: one Cast
  const ValueId n = b.layer_norm(y2, gamma, kNoValue, 1e-5f, "ln");
  verify(g);
  int casts = 0;
  for (const Node& node : g.nodes) casts += node.op == OpKind::Cast;
  EXPECT_EQ(casts, 1);
  EXPECT_EQ(g.value(y2).dtype, DType::bf16);
  EXPECT_EQ(g.value(n).dtype, DType::bf16);
  EXPECT_EQ(g.nodes[1].inputs[2], bias);  // bias stays the f32 master
  EXPECT_EQ(g.nodes[3].inputs[1], gamma);
}

TEST(GraphIr, DumpHasOneLinePerNode) {
  Mlp m;
  build_mlp(m);
  m.g.nodes[0].attrs.backward = true;  // only to see the tag printed
  const std::string text = dump(m.g);
  EXPECT_NE(text.find("%5 = Linear(%0, %2, %3) [bwd]  // fc1"), std::string::npos) << text;
  EXPECT_NE(text.find("= Gelu(%5) variant=tanh  // act"), std::string::npos) << text;
  EXPECT_NE(text.find("%2 = parameter fc1.w f32[16, 8]"), std::string::npos) << text;
  EXPECT_NE(text.find("outputs: %" + std::to_string(m.loss)), std::string::npos) << text;
  const std::string dot = to_dot(m.g);
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("fillcolor"), std::string::npos);  // the tagged node is shaded
}

TEST(GraphIr, BuilderRejectsMismatchedShapesNamingTheNode) {
  Graph g;
  Builder b(g);
  const ValueId x = b.input("x", DType::f32, {2, 8});
  const ValueId w = b.parameter("w", {4, 7});
  expect_error([&] { b.linear(x, w, kNoValue, "proj"); },
               {"node 0 (Linear 'proj')", "linear_forward: w must have shape [out_features, 8]", "but got [4, 7]"});
  EXPECT_TRUE(g.nodes.empty());
  const ValueId qkv = b.input("qkv", DType::f32, {2, 3, 12});
  expect_error([&] { b.attention(qkv, 0, "attn"); }, {"Attention 'attn'", "heads must be >= 1"});
  expect_error([&] { b.attention(qkv, 3, "attn"); },
               {"Attention 'attn'", "attention_forward: q's last dim (4) must be a multiple of heads (3)"});
  const ValueId qkv_odd = b.input("qkv_odd", DType::f32, {2, 3, 10});  // not q, k, v packed
  expect_error([&] { b.attention(qkv_odd, 1, "attn"); }, {"Attention 'attn'", "last dim (10) must be 3 * C"});
  const ValueId t = b.input("t", DType::f32, {2});
  expect_error([&] { b.softmax_cross_entropy(x, t, "ce"); }, {"targets", "must be i32"});
  expect_error([&] { b.layer_norm(x, kNoValue, kNoValue, -1.0f, "ln"); }, {"eps must be finite"});
  expect_error(
      [] {
        Graph h;
        Builder(h, {DType::i32});
      },
      {"options.compute must be f32"});
}

TEST(GraphIr, VerifierRejectsStructuralErrors) {
  {
    Mlp m;
    build_mlp(m);
    m.g.nodes[2].outputs[0] = m.h;  // h produced twice
    expect_error([&] { verify(m.g); }, {"node 2 (Linear 'fc2')", "is already produced by node 1 (Gelu 'act')"});
  }
  {
    Mlp m;
    build_mlp(m);
    std::swap(m.g.nodes[1], m.g.nodes[2]);  // fc2 reads h before Gelu defines it
    expect_error([&] { verify(m.g); },
                 {"node 1 (Linear 'fc2')", "read before it is defined", "its producer is node 2"});
  }
  {
    Mlp m;
    build_mlp(m);
    m.g.nodes[1].outputs[0] = m.w1;  // a parameter produced by a node
    expect_error([&] { verify(m.g); }, {"node 1 (Gelu 'act')", "is a graph parameter"});
  }
  {
    Mlp m;
    build_mlp(m);
    m.g.nodes[1].inputs.push_back(m.x);  // wrong slot count
    expect_error([&] { verify(m.g); }, {"Gelu 'act'", "expected 1 input slots, but got 2"});
  }
  {
    Mlp m;
    build_mlp(m);
    m.g.nodes[1].attrs.gelu_variant = static_cast<GeluVariant>(7);
    expect_error([&] { verify(m.g); },
                 {"Gelu 'act'", "gelu_forward: variant must be GeluVariant::tanh or GeluVariant::erf"});
  }
  {
    Mlp m;
    build_mlp(m);
    m.g.value(m.h).dtype = DType::i32;
    expect_error([&] { verify(m.g); }, {"Gelu 'act'", "gelu_forward: y dtype must be f32, bf16 or f16, but got i32"});
  }
  {
    Mlp m;
    build_mlp(m);
    m.g.nodes[0].inputs[0] = kNoValue;
    expect_error([&] { verify(m.g); }, {"node 0 (Linear 'fc1')", "the input x is required but absent"});
  }
  {
    Mlp m;
    build_mlp(m);
    m.g.outputs.push_back(999);
    expect_error([&] { verify(m.g); }, {"graph output id %999 is out of range"});
  }
}

// Per-op rules come from the op's own descriptor check over the views the executor binds (null
// data); the graph keeps only what its binding hides from the op (here: targets flattened).
TEST(GraphIr, VerifierAsksTheOpsDescriptorChecks) {
  {
    Mlp m;
    build_mlp(m);
    m.g.value(m.b1).shape = {15};
    expect_error([&] { verify(m.g); }, {"graph: node 0 (Linear 'fc1'): linear_forward: bias"});
  }
  {
    Mlp m;
    build_mlp(m);
    m.g.value(m.targets).dtype = DType::f32;
    expect_error([&] { verify(m.g); },
                 {"node 3 (SoftmaxCrossEntropy 'loss')", "softmax_cross_entropy_forward: targets"});
  }
  {
    Mlp m;
    build_mlp(m);
    m.g.value(m.targets).shape = {3, 4};  // as many targets as rows, but not shaped like them
    expect_error([&] { verify(m.g); }, {"node 3 (SoftmaxCrossEntropy 'loss')", "targets (%", "must have shape [4, 3]"});
  }
}

TEST(GraphIr, VerifierChecksTheTagInvariant) {
  Mlp m;
  build_mlp(m);
  m.g.nodes[1].attrs.backward = true;
  expect_error([&] { verify(m.g); }, {"node 1 (Gelu 'act')", "carries the backward tag but precedes Yield"});
  m.g.nodes[1].attrs.backward = false;
  // A Yield followed by an untagged node that reads a gradient.
  const ValueId seed = m.g.add_value("dloss", DType::f32, {}, ValueKind::gradient);
  Node y;
  y.op = OpKind::Yield;
  y.inputs = {m.loss};
  m.g.add_node(y);
  Node bwd;
  bwd.op = OpKind::Gelu;
  bwd.name = "reads_grad";
  const ValueId d = m.g.add_value("d", DType::f32, {4, 3, 16}, ValueKind::gradient);
  bwd.inputs = {m.h};
  bwd.outputs = {d};
  m.g.add_node(bwd);
  expect_error([&] { verify(m.g); }, {"node 5 (Gelu 'reads_grad')", "follows Yield but lacks the backward tag"});
  verify(m.g, {.tags = false});
  m.g.nodes[5].attrs.backward = true;
  verify(m.g);
  m.g.nodes[5].attrs.backward = false;
  m.g.nodes[4].inputs.push_back(seed);  // Yield (untagged) reading a gradient
  expect_error([&] { verify_tags(m.g); }, {"node 4 (Yield", "reads the gradient %"});
}

}  // namespace
}  // namespace ampkit::graph
