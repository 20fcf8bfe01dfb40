// Tests of Trainer::from_graph (train layer): the trainer of a graph the caller built with the
// graph::Builder. The GPT factory's graph through from_graph gives the bits of Trainer::gpt; a
// tied weight (the token table used as the output projection) is one tensor whose update is the
// sum of both uses' (against the same model untied, both copies starting equal); an RMSNorm
// model trains; graphs that do not fit are refused naming what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/trainer.hpp"
#include "tests/graph/graph_test_support.hpp"

namespace ampkit::train {
namespace {

using graph::Builder;
using graph::kNoValue;
using graph::ValueId;
using graph::testing::expect_error;

constexpr std::int64_t kBatch = 2, kSeq = 8, kVocab = 11, kDim = 16;

// tokens[i] = i mod vocab, targets: the next id (a pattern a small model learns).
std::vector<std::int32_t> ids(std::int64_t offset) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(kBatch * kSeq));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>((i * 3 + offset) % kVocab);
  return v;
}

TrainerConfig sgd(float lr) {
  TrainerConfig c;
  c.batch = kBatch;
  c.optimizer.kind = OptimizerKind::sgd;
  c.optimizer.lr = lr;
  c.seed = 7;
  return c;
}

// Embedding -> RMSNorm -> Linear+GELU -> output projection -> loss. `tied`: the projection is the
// token table itself ([vocab, dim] is Linear's [out, in]); else its own weight "head.w".
ModelGraph small_model(bool tied) {
  ModelGraph m;
  Builder b(m.graph, {DType::f32});
  ParameterList params(b);
  m.tokens = b.input("tokens", DType::i32, {kBatch, kSeq});
  m.targets = b.input("targets", DType::i32, {kBatch, kSeq});
  const ValueId table = params.weight("tok_emb", {kVocab, kDim}, 0.5f);
  ValueId x = b.embedding(m.tokens, table, "tok_emb");
  x = b.rms_norm(x, params.ones("norm.g", kDim), 1e-5f, "norm");
  const ValueId fc_w = params.weight("fc.w", {kDim, kDim}, 0.3f);
  const ValueId fc_b = params.zeros("fc.b", kDim);
  x = b.gelu(b.linear(x, fc_w, fc_b, "fc"), GeluVariant::tanh, "fc.act");
  const ValueId head = tied ? table : params.weight("head.w", {kVocab, kDim}, 0.5f);
  m.logits = b.linear(x, head, kNoValue, "head");
  m.loss = b.softmax_cross_entropy(m.logits, m.targets, "loss");
  m.graph.outputs = {m.loss};
  m.parameters = params.list();
  return m;
}

std::vector<float> tensor(Trainer& t, const std::string& name) {
  for (const NamedTensor& n : t.tensors())
    if (n.name == name) return {n.data, n.data + n.numel()};
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

TEST(TrainerFromGraph, TheGptFactoryGraphGivesTheBitsOfTrainerGpt) {
  GptConfig g;
  g.vocab = kVocab, g.seq_len = kSeq, g.dim = kDim, g.heads = 2, g.layers = 1;
  for (DType compute : {DType::f32, DType::bf16}) {
    TrainerConfig c;
    c.batch = kBatch, c.compute = compute, c.seed = 3;
    Trainer a = Trainer::gpt(g, c);
    Trainer b = Trainer::from_graph(build_gpt(g, kBatch, compute), c);
    for (int s = 0; s < 3; ++s) {
      const StepResult ra = a.step(ids(s), ids(s + 1)), rb = b.step(ids(s), ids(s + 1));
      EXPECT_EQ(ra.loss, rb.loss) << "step " << s;
    }
    const std::vector<NamedTensor> ta = a.tensors(), tb = b.tensors();
    ASSERT_EQ(ta.size(), tb.size());
    for (std::size_t i = 0; i < ta.size(); ++i) {
      EXPECT_EQ(ta[i].name, tb[i].name);
      EXPECT_EQ(std::vector<float>(ta[i].data, ta[i].data + ta[i].numel()),
                std::vector<float>(tb[i].data, tb[i].data + tb[i].numel()))
          << ta[i].name;
    }
    EXPECT_EQ(b.gpt_config(), nullptr);  // a graph's trainer has no factory config
  }
}

TEST(TrainerFromGraph, ATiedWeightIsOneTensorUpdatedByTheSumOfBothUses) {
  Trainer tied = Trainer::from_graph(small_model(true), sgd(1.0f));
  Trainer untied = Trainer::from_graph(small_model(false), sgd(1.0f));
  std::vector<std::string> names;
  for (const NamedTensor& n : tied.tensors()) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"tok_emb", "norm.g", "fc.w", "fc.b"}));  // one table, no head.w
  // The same starting point: the untied copies both hold the tied table.
  for (const std::string& n : {"tok_emb", "norm.g", "fc.w", "fc.b"}) untied.set_tensor(n, tensor(tied, n));
  const std::vector<float> w0 = tensor(tied, "tok_emb");
  untied.set_tensor("head.w", w0);
  const StepResult rt = tied.step(ids(0), ids(1)), ru = untied.step(ids(0), ids(1));
  EXPECT_EQ(rt.loss, ru.loss);  // the same forward
  // SGD at lr 1: the update is minus the gradient; the tied one is the sum of the two uses'.
  const std::vector<float> wt = tensor(tied, "tok_emb"), we = tensor(untied, "tok_emb"), wh = tensor(untied, "head.w");
  double largest = 0.0;
  for (std::size_t i = 0; i < w0.size(); ++i) {
    const double sum = (static_cast<double>(we[i]) - w0[i]) + (static_cast<double>(wh[i]) - w0[i]);
    EXPECT_NEAR(static_cast<double>(wt[i]) - w0[i], sum, 1e-6 + 1e-5 * std::fabs(sum)) << i;
    largest = std::max(largest, std::fabs((static_cast<double>(we[i]) - w0[i])));
  }
  EXPECT_GT(largest, 1e-4);  // the embedding's own gradient is not negligible: the sum is tested
  // Deterministic: the same run again gives the same bits.
  Trainer again = Trainer::from_graph(small_model(true), sgd(1.0f));
  again.step(ids(0), ids(1));
  EXPECT_EQ(tensor(again, "tok_emb"), wt);
}

TEST(TrainerFromGraph, AnRmsNormModelTrains) {
  for (DType compute : {DType::f32, DType::bf16}) {
    TrainerConfig c;
    c.batch = kBatch, c.compute = compute, c.optimizer.lr = 1e-2f, c.seed = 5;
    ModelGraph built;
    {
      Builder b(built.graph, {compute});
      ParameterList params(b);
      built.tokens = b.input("tokens", DType::i32, {kBatch, kSeq});
      built.targets = b.input("targets", DType::i32, {kBatch, kSeq});
      ValueId x = b.embedding(built.tokens, params.weight("tok_emb", {kVocab, kDim}), "tok_emb");
      x = b.rms_norm(x, params.ones("norm.g", kDim), 1e-5f, "norm");
      built.logits = b.linear(x, params.weight("head.w", {kVocab, kDim}), params.zeros("head.b", kVocab), "head");
      built.loss = b.softmax_cross_entropy(built.logits, built.targets, "loss");
      built.graph.outputs = {built.loss};
      built.parameters = params.list();
    }
    Trainer t = Trainer::from_graph(std::move(built), c);
    const double first = t.evaluate(ids(0), ids(1));
    for (int s = 0; s < 60; ++s) t.step(ids(0), ids(1));
    EXPECT_LT(t.evaluate(ids(0), ids(1)), 0.5 * first) << dtype_name(compute);
  }
}

TEST(TrainerFromGraph, GraphsThatDoNotFitAreRefused) {
  const char* fn = "train::Trainer::from_graph: ";
  auto refused = [&](auto edit, const std::string& fragment) {
    ModelGraph m = small_model(false);
    edit(m);
    expect_error([&] { Trainer::from_graph(std::move(m), sgd(0.1f)); }, (fn + fragment).c_str());
  };
  refused([](ModelGraph& m) { m.tokens = kNoValue; }, "tokens must name a value of the graph");
  refused(
      [](ModelGraph& m) {
        m.tokens = m.targets;
        m.targets = m.tokens;
      },
      "targets must be an i32 input");
  refused([](ModelGraph& m) { m.targets = m.logits; }, "targets must be an i32 input [2, 8]");
  refused([](ModelGraph& m) { m.loss = m.logits; }, "loss must be an f32 scalar");
  refused([](ModelGraph& m) { m.logits = m.loss; }, "logits must be [batch = 2, seq = 8, vocab]");
  refused([](ModelGraph& m) { m.parameters.pop_back(); },
          "the graph's parameter 'head.w' is not in the parameter list");
  refused([](ModelGraph& m) { m.parameters.push_back(m.parameters.front()); },
          "the parameter list names 'tok_emb' twice");
  refused([](ModelGraph& m) { m.parameters.push_back({m.tokens}); },
          "the parameter list names 'tokens', which is not a parameter");
  ModelGraph m = small_model(false);
  TrainerConfig c = sgd(0.1f);
  c.batch = 3;
  expect_error([&] { Trainer::from_graph(std::move(m), c); }, "tokens must be an i32 input [batch = 3, seq]");
}

}  // namespace
}  // namespace ampkit::train
