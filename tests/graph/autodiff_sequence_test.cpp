// Gradients of the sequence ops of the graph (graph layer): Embedding (token and position
// tables, a repeated id), causal multi-head Attention on a packed QKV (fused and unfused) and a
// whole one-block GPT, each checked against central finite differences through the executor.
#include <gtest/gtest.h>

#include <cmath>

#include "ampkit/graph/builder.hpp"
#include "ampkit/train/models.hpp"
#include "graph/graph_test_support.hpp"

namespace ampkit::graph {
namespace {

using testing::expect_gradients_match_fd;
using testing::TrainGraph;

TEST(GraphAutodiffSequence, TokenAndPositionEmbeddings) {
  Graph g;
  Builder b(g);
  const ValueId ids = b.input("ids", DType::i32, {2, 3});
  const ValueId pos = b.input("pos", DType::i32, {2, 3});
  const ValueId targets = b.input("targets", DType::i32, {2, 3});
  const ValueId tok = b.parameter("tok", {4, 5});  // 6 ids over 4 rows: some repeat
  const ValueId ptab = b.parameter("ptab", {3, 5});
  const ValueId w = b.parameter("w", {4, 5});
  const ValueId x = b.add(b.embedding(ids, tok, "tok"), b.embedding(pos, ptab, "pos"), "sum");
  const ValueId loss = b.softmax_cross_entropy(b.linear(x, w, kNoValue, "fc"), targets, "ce");
  const auto seed = ampkit::testing::fresh_seed();
  SCOPED_TRACE(seed);
  TrainGraph t(g, loss, {}, {});
  t.fill(seed, 1.0, 3);  // ids, positions and targets in [0, 3)
  expect_gradients_match_fd(t, {tok, ptab, w});
}

TEST(GraphAutodiffSequence, CausalAttentionOnPackedQkv) {
  for (bool fuse : {false, true}) {
    Graph g;
    Builder b(g);
    const ValueId x = b.input("x", DType::f32, {2, 4, 6});
    const ValueId targets = b.input("targets", DType::i32, {2, 4});
    const ValueId wqkv = b.parameter("qkv.w", {12, 6});
    const ValueId bqkv = b.parameter("qkv.b", {12});
    const ValueId w = b.parameter("out.w", {5, 4});
    const ValueId a = b.attention(b.linear(x, wqkv, bqkv, "qkv"), 2, "attn");
    const ValueId loss = b.softmax_cross_entropy(b.linear(a, w, kNoValue, "out"), targets, "ce");
    const auto seed = ampkit::testing::fresh_seed();
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " fuse " << fuse);
    TrainGraph t(g, loss, {x}, {.fuse = fuse});
    // Scale 0.6 keeps the scores O(1): a sharp softmax would put the finite differences'
    // truncation error (h^2 f''') above the tolerance.
    t.fill(seed, 0.6, 5);
    expect_gradients_match_fd(t, {x, wqkv, bqkv, w});
  }
}

// The whole GPT of modules.hpp (one block, fused), every parameter element.
TEST(GraphAutodiffSequence, TinyGptEveryParameter) {
  train::GptConfig c;
  c.vocab = 5;
  c.seq_len = 3;
  c.dim = 4;
  c.heads = 2;
  c.layers = 1;
  c.mlp_hidden = 6;
  train::ModelGraph m = train::build_gpt(c, 2, DType::f32);
  std::vector<ValueId> params;
  for (const train::ParameterInit& p : m.parameters) params.push_back(p.value);
  const auto seed = ampkit::testing::fresh_seed();
  SCOPED_TRACE(seed);
  TrainGraph t(m.graph, m.loss, {}, {});
  t.fill(seed, 0.6, 3);  // tokens, positions and targets in [0, 3)
  expect_gradients_match_fd(t, params);
}

}  // namespace
}  // namespace ampkit::graph
