// Tests of the layer modules and the loss scaler (graph layer): the GPT and token-MLP graphs
// have the documented structure, parameter names and inits, survive autodiff and every pass
// (each block's MLP fused into GELU_AUX_BIAS and DGELU_BGRAD, exact tags); bad configs are
// refused naming the field; dynamic loss scaling follows its rule step by step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/autodiff.hpp"
#include "ampkit/graph/passes.hpp"
#include "ampkit/graph/verify.hpp"
#include "ampkit/train/models.hpp"
#include "tests/graph/graph_test_support.hpp"
#include "train/loss_scaler.hpp"

namespace ampkit::train {
namespace {

using namespace ampkit::graph;  // the models are graphs (Graph, Builder, passes)

using graph::testing::expect_error;

std::map<OpKind, int> count_ops(const Graph& g) {
  std::map<OpKind, int> n;
  for (const Node& node : g.nodes) n[node.op] += 1;
  return n;
}

TEST(GraphModules, GptStructureParametersAndPasses) {
  GptConfig c;
  c.vocab = 11;
  c.seq_len = 6;
  c.dim = 8;
  c.heads = 2;
  c.layers = 3;
  ModelGraph m = build_gpt(c, 2, DType::bf16);
  verify(m.graph);
  auto ops = count_ops(m.graph);
  EXPECT_EQ(ops[OpKind::Embedding], 2);
  EXPECT_EQ(ops[OpKind::Attention], 3);
  EXPECT_EQ(ops[OpKind::LayerNorm], 7);
  EXPECT_EQ(ops[OpKind::Linear], 13);  // 4 per block + head
  EXPECT_EQ(ops[OpKind::Add], 7);      // embeddings + 2 residuals per block
  EXPECT_EQ(ops[OpKind::Cast], 13);    // one compute copy per GEMM weight
  EXPECT_EQ(m.graph.value(m.logits).shape, (std::vector<std::int64_t>{2, 6, 11}));
  EXPECT_EQ(m.graph.value(m.logits).dtype, DType::bf16);
  ASSERT_EQ(m.parameters.size(), 2u + 3u * 12u + 3u);
  EXPECT_EQ(m.graph.value(m.parameters[0].value).name, "tok_emb");
  EXPECT_EQ(m.graph.value(m.parameters[2].value).name, "h0.ln1.g");
  EXPECT_EQ(m.parameters[2].kind, InitKind::ones);
  EXPECT_EQ(m.graph.value(m.parameters[4].value).name, "h0.attn.qkv.w");
  EXPECT_EQ(m.graph.value(m.parameters[4].value).shape, (std::vector<std::int64_t>{24, 8}));
  EXPECT_TRUE(m.parameters[4].decay);
  EXPECT_FALSE(m.parameters[5].decay);  // qkv bias
  const ParameterInit& proj = m.parameters[6];
  EXPECT_EQ(m.graph.value(proj.value).name, "h0.attn.proj.w");
  EXPECT_FLOAT_EQ(proj.std, 0.02f / std::sqrt(6.0f));
  EXPECT_EQ(m.graph.value(m.parameters.back().value).name, "head.w");
  for (const ParameterInit& p : m.parameters) EXPECT_EQ(m.graph.value(p.value).dtype, DType::f32);

  const GradientMap grads = build_backward(m.graph, m.loss);
  run_passes(m.graph);
  verify(m.graph);
  ops = count_ops(m.graph);
  EXPECT_EQ(ops[OpKind::Gelu], 0);
  EXPECT_EQ(ops[OpKind::GeluBackward], 0);
  int gelu_gemms = 0, dgelu_bgrad = 0;
  for (const Node& n : m.graph.nodes) {
    gelu_gemms += n.op == OpKind::Linear && n.attrs.gelu;
    dgelu_bgrad += n.op == OpKind::LinearBackward && n.attrs.below_gelu && n.outputs[3] != kNoValue;
  }
  EXPECT_EQ(gelu_gemms, 3);
  EXPECT_EQ(dgelu_bgrad, 3);
  EXPECT_EQ(ops[OpKind::AttentionBackward], 3);
  EXPECT_EQ(ops[OpKind::EmbeddingBackward], 2);
  for (const ParameterInit& p : m.parameters) {
    const ValueId d = grads.of(p.value);
    ASSERT_NE(d, kNoValue) << m.graph.value(p.value).name;
    EXPECT_EQ(m.graph.value(d).dtype, DType::f32) << m.graph.value(p.value).name;  // casts eliminated
  }
  const int y = m.graph.yield_index();
  for (std::size_t i = 0; i < m.graph.nodes.size(); ++i)
    EXPECT_EQ(m.graph.nodes[i].attrs.backward, static_cast<int>(i) > y);
}

TEST(GraphModules, TokenMlpStructure) {
  MlpConfig c;
  c.vocab = 7;
  c.seq_len = 3;
  c.dim = 4;
  c.hidden = 9;
  c.layers = 2;
  ModelGraph m = build_token_mlp(c, 5, DType::f32);
  verify(m.graph);
  auto ops = count_ops(m.graph);
  EXPECT_EQ(ops[OpKind::Embedding], 1);
  EXPECT_EQ(ops[OpKind::Linear], 3);
  EXPECT_EQ(ops[OpKind::Gelu], 2);
  EXPECT_EQ(ops[OpKind::Cast], 0);
  EXPECT_EQ(m.positions, kNoValue);
  EXPECT_EQ(m.graph.value(m.logits).shape, (std::vector<std::int64_t>{5, 3, 7}));
  build_backward(m.graph, m.loss);
  run_passes(m.graph);
  EXPECT_EQ(count_ops(m.graph)[OpKind::Gelu], 0);
}

TEST(GraphModules, BadConfigsNameTheField) {
  GptConfig g;
  g.dim = 10;
  g.heads = 4;
  expect_error([&] { build_gpt(g, 1, DType::f32); }, "dim (10) must be a multiple of heads (4)");
  g = GptConfig{};
  g.layers = 0;
  expect_error([&] { build_gpt(g, 1, DType::f32); }, "layers must be >= 1, but got 0");
  g = GptConfig{};
  expect_error([&] { build_gpt(g, 0, DType::f32); }, "batch must be >= 1");
  g.norm_eps = -1.0f;
  expect_error([&] { build_gpt(g, 1, DType::f32); }, "norm_eps must be finite and >= 0");
  g = GptConfig{};
  g.mlp_hidden = -3;
  expect_error([&] { build_gpt(g, 1, DType::f32); }, "mlp_hidden must be 0");
  expect_error([&] { build_gpt(GptConfig{}, 1, DType::i32); }, "options.compute must be f32");
  MlpConfig m;
  m.hidden = 0;
  expect_error([&] { build_token_mlp(m, 1, DType::f32); }, "hidden must be >= 1, but got 0");
  m = MlpConfig{};
  m.vocab = std::int64_t{1} << 40;
  expect_error([&] { build_token_mlp(m, 1, DType::f32); }, "vocab must be at most");
}

TEST(GraphLossScaler, BacksOffOnOverflowAndGrowsAfterTheInterval) {
  LossScaleConfig c;
  c.initial_scale = 1024.0f;
  c.growth_interval = 3;
  c.min_scale = 256.0f;
  LossScaler s(c);
  EXPECT_EQ(s.scale(), 1024.0f);
  EXPECT_TRUE(s.update(true));
  EXPECT_TRUE(s.update(true));
  EXPECT_EQ(s.scale(), 1024.0f);
  EXPECT_EQ(s.state().good_steps, 2);
  EXPECT_TRUE(s.update(true));  // third good step: doubles
  EXPECT_EQ(s.scale(), 2048.0f);
  EXPECT_EQ(s.state().good_steps, 0);
  EXPECT_TRUE(s.update(true));
  EXPECT_FALSE(s.update(false));  // overflow: halve, reset the count
  EXPECT_EQ(s.scale(), 1024.0f);
  EXPECT_EQ(s.state().good_steps, 0);
  EXPECT_EQ(s.state().skipped_steps, 1);
  EXPECT_FALSE(s.update(false));
  EXPECT_FALSE(s.update(false));
  EXPECT_EQ(s.scale(), 256.0f);  // not below min_scale
  EXPECT_EQ(s.state().skipped_steps, 3);
  s.set_state({std::numeric_limits<float>::max(), 2, 0});
  EXPECT_TRUE(s.update(true));
  EXPECT_TRUE(std::isfinite(s.scale()));  // growth never overflows the scale
  expect_error([&] { s.set_state({0.0f, 0, 0}); }, "scale must be finite and > 0");
  c.backoff = 0.0f;
  expect_error([&] { LossScaler bad(c); }, "backoff must be in (0, 1]");
  c = LossScaleConfig{};
  c.growth_interval = 0;
  expect_error([&] { LossScaler bad(c); }, "growth_interval must be >= 1");
}

}  // namespace
}  // namespace ampkit::train
