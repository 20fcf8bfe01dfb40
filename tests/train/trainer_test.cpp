// Tests of the trainer (graph layer): a token MLP trained with SGD (momentum, weight decay) in
// f32 follows a plain double-precision reference trajectory (losses and parameters, step by
// step); micro-batch accumulation equals the full batch; clipping scales the update; fp16
// dynamic loss scaling skips an overflowing step and halves, grows after the interval;
// checkpoints (named tensors, step count, loss-scale state) restore bit for bit; a tiny GPT's
// loss falls in f32 and bf16; bad input is refused with nothing changed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/train/trainer.hpp"
#include "tests/graph/graph_test_support.hpp"
#include "tests/numerics/policy_test_support.hpp"

namespace ampkit::train {
namespace {

using namespace ampkit::graph;  // the models are graphs (Graph, Builder, passes)

using graph::testing::expect_error;

std::vector<std::int32_t> random_ids(std::mt19937_64& rng, std::size_t n, std::int64_t vocab) {
  std::uniform_int_distribution<std::int32_t> d(0, static_cast<std::int32_t>(vocab - 1));
  std::vector<std::int32_t> out(n);
  for (auto& x : out) x = d(rng);
  return out;
}

std::map<std::string, std::vector<double>> snapshot(Trainer& t) {
  std::map<std::string, std::vector<double>> out;
  for (const NamedTensor& n : t.tensors()) out[n.name].assign(n.data, n.data + n.numel());
  return out;
}

// ---------------------------------------------------------------- the double reference

using ::ampkit::testing::gelu_tanh;
using ::ampkit::testing::gelu_tanh_derivative;

// Token MLP with one hidden layer: E [V, D], W1 [H, D], b1 [H], W2 [V, H], b2 [V]; SGD as in
// ops/optimizer.hpp (g = grad + wd p for decayed tensors; buf = mom buf + g; p -= lr buf).
struct ReferenceMlp {
  std::int64_t V, D, H;
  std::map<std::string, std::vector<double>> p, buf;

  double step(const std::vector<std::int32_t>& ids, const std::vector<std::int32_t>& y, double lr, double momentum,
              double wd) {
    auto& E = p["tok_emb"];
    auto& W1 = p["l0.w"];
    auto& b1 = p["l0.b"];
    auto& W2 = p["head.w"];
    auto& b2 = p["head.b"];
    std::map<std::string, std::vector<double>> g;
    for (auto& [name, v] : p) g[name].assign(v.size(), 0.0);
    const auto rows = static_cast<std::int64_t>(ids.size());
    double loss = 0.0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t t = ids[static_cast<std::size_t>(r)];
      std::vector<double> pre(static_cast<std::size_t>(H)), h(static_cast<std::size_t>(H)),
          z(static_cast<std::size_t>(V));
      for (std::int64_t i = 0; i < H; ++i) {
        double s = b1[static_cast<std::size_t>(i)];
        for (std::int64_t j = 0; j < D; ++j)
          s += W1[static_cast<std::size_t>(i * D + j)] * E[static_cast<std::size_t>(t * D + j)];
        pre[static_cast<std::size_t>(i)] = s;
        h[static_cast<std::size_t>(i)] = gelu_tanh(s);
      }
      double mx = -1e300;
      for (std::int64_t c = 0; c < V; ++c) {
        double s = b2[static_cast<std::size_t>(c)];
        for (std::int64_t i = 0; i < H; ++i)
          s += W2[static_cast<std::size_t>(c * H + i)] * h[static_cast<std::size_t>(i)];
        z[static_cast<std::size_t>(c)] = s;
        mx = std::max(mx, s);
      }
      double se = 0.0;
      for (double v : z) se += std::exp(v - mx);
      const double lse = mx + std::log(se);
      const std::int64_t target = y[static_cast<std::size_t>(r)];
      loss += lse - z[static_cast<std::size_t>(target)];
      std::vector<double> dh(static_cast<std::size_t>(H), 0.0);
      for (std::int64_t c = 0; c < V; ++c) {
        const double dz =
            (std::exp(z[static_cast<std::size_t>(c)] - lse) - (c == target ? 1.0 : 0.0)) / static_cast<double>(rows);
        g["head.b"][static_cast<std::size_t>(c)] += dz;
        for (std::int64_t i = 0; i < H; ++i) {
          g["head.w"][static_cast<std::size_t>(c * H + i)] += dz * h[static_cast<std::size_t>(i)];
          dh[static_cast<std::size_t>(i)] += dz * W2[static_cast<std::size_t>(c * H + i)];
        }
      }
      for (std::int64_t i = 0; i < H; ++i) {
        const double dpre = dh[static_cast<std::size_t>(i)] * gelu_tanh_derivative(pre[static_cast<std::size_t>(i)]);
        g["l0.b"][static_cast<std::size_t>(i)] += dpre;
        for (std::int64_t j = 0; j < D; ++j) {
          g["l0.w"][static_cast<std::size_t>(i * D + j)] += dpre * E[static_cast<std::size_t>(t * D + j)];
          g["tok_emb"][static_cast<std::size_t>(t * D + j)] += dpre * W1[static_cast<std::size_t>(i * D + j)];
        }
      }
    }
    for (auto& [name, v] : p) {
      const bool decay = name == "tok_emb" || name == "l0.w" || name == "head.w";
      auto& b = buf[name];
      b.resize(v.size(), 0.0);
      for (std::size_t i = 0; i < v.size(); ++i) {
        const double gi = g[name][i] + (decay ? wd * v[i] : 0.0);
        b[i] = momentum * b[i] + gi;
        v[i] -= lr * (momentum != 0.0 ? b[i] : gi);
      }
    }
    return loss / static_cast<double>(rows);
  }
};

MlpConfig small_mlp() {
  MlpConfig m;
  m.vocab = 9;
  m.seq_len = 5;
  m.dim = 6;
  m.hidden = 10;
  m.layers = 1;
  return m;
}

TrainerConfig sgd_config(std::int64_t batch, std::int64_t micro) {
  TrainerConfig c;
  c.batch = batch;
  c.micro_batches = micro;
  c.optimizer.kind = OptimizerKind::sgd;
  c.optimizer.lr = 0.5f;
  c.optimizer.momentum = 0.9f;
  c.optimizer.weight_decay = 0.1f;
  c.seed = 11;
  return c;
}

TEST(GraphTrainer, F32MlpFollowsTheDoubleReferenceTrajectory) {
  const auto seed = ampkit::testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const MlpConfig m = small_mlp();
  Trainer t = Trainer::mlp(m, sgd_config(3, 1));
  ReferenceMlp ref{m.vocab, m.dim, m.hidden, {}, {}};
  for (const auto& [name, v] : snapshot(t)) ref.p[name] = v;
  // Start the weights larger than N(0, 0.02) so that the GELU is non-linear and the gradients
  // are far from zero: the check then sees every term.
  for (auto& [name, v] : ref.p)
    for (double& x : v) x = std::round(x * 40.0 * 1024.0) / 1024.0;  // exact in f32 too
  for (const auto& [name, v] : ref.p) {
    std::vector<float> f(v.begin(), v.end());
    t.set_tensor(name, f);
  }
  std::vector<double> losses;
  for (int s = 0; s < 6; ++s) {
    const auto ids = random_ids(rng, 15, m.vocab), y = random_ids(rng, 15, m.vocab);
    const StepResult r = t.step(ids, y);
    const double want = ref.step(ids, y, 0.5, 0.9, 0.1);
    EXPECT_FALSE(r.skipped);
    EXPECT_NEAR(r.loss, want, 2e-6 * std::fabs(want)) << "step " << s;
    losses.push_back(r.loss);
    // f32 rounding of the forward, the backward and the update: a few 1e-7 relative per step,
    // compounded over 6 steps; a lost term (weight decay is lr * wd * p = 0.05 p per step)
    // would be off by orders of magnitude more than 1e-5.
    for (const auto& [name, v] : snapshot(t)) {
      if (name.find(':') != std::string::npos) continue;
      double worst = 0.0;
      for (std::size_t i = 0; i < v.size(); ++i) worst = std::max(worst, std::fabs(v[i] - ref.p[name][i]));
      EXPECT_LT(worst, 1e-5) << name << " after step " << s;
    }
  }
  EXPECT_EQ(t.step_count(), 6);
  EXPECT_GT(losses.front(), 0.0);
}

TEST(GraphTrainer, MicroBatchesEqualTheFullBatch) {
  std::mt19937_64 rng(4);
  const MlpConfig m = small_mlp();
  Trainer whole = Trainer::mlp(m, sgd_config(4, 1)), split = Trainer::mlp(m, sgd_config(2, 2));
  for (int s = 0; s < 3; ++s) {
    const auto ids = random_ids(rng, 20, m.vocab), y = random_ids(rng, 20, m.vocab);
    const StepResult a = whole.step(ids, y), b = split.step(ids, y);
    EXPECT_NEAR(a.loss, b.loss, 1e-6 * a.loss);
    EXPECT_NEAR(a.grad_norm, b.grad_norm, 1e-5 * a.grad_norm);
  }
  const auto pa = snapshot(whole), pb = snapshot(split);
  for (const auto& [name, v] : pa)
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], pb.at(name)[i], 1e-6) << name;
}

TEST(GraphTrainer, ClippingScalesTheUpdateToTheClipNorm) {
  std::mt19937_64 rng(5);
  const MlpConfig m = small_mlp();
  TrainerConfig c = sgd_config(3, 1);
  c.optimizer.momentum = 0.0f;
  c.optimizer.weight_decay = 0.0f;
  Trainer free = Trainer::mlp(m, c);
  c.clip_norm = 1e-3f;
  Trainer clipped = Trainer::mlp(m, c);
  const auto before = snapshot(free);
  const auto ids = random_ids(rng, 15, m.vocab), y = random_ids(rng, 15, m.vocab);
  const StepResult a = free.step(ids, y), b = clipped.step(ids, y);
  EXPECT_DOUBLE_EQ(a.grad_norm, b.grad_norm);
  ASSERT_GT(a.grad_norm, 10 * 1e-3);
  const double ratio = 1e-3 / (a.grad_norm + 1e-6);
  const auto pa = snapshot(free), pb = snapshot(clipped);
  double moved = 0.0;
  for (const auto& [name, v] : before)
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double da = pa.at(name)[i] - v[i], db = pb.at(name)[i] - v[i];
      moved = std::max(moved, std::fabs(da));
      // Deltas of f32 parameters: each is exact to half an ulp of the parameter.
      EXPECT_NEAR(db, da * ratio, 1e-6 * std::fabs(da) + 0x1p-23 * std::fabs(v[i])) << name;
    }
  EXPECT_GT(moved, 1e-3);
}

TEST(GraphTrainer, Fp16LossScalingSkipsOverflowAndGrows) {
  std::mt19937_64 rng(6);
  const MlpConfig m = small_mlp();
  TrainerConfig c;
  c.batch = 3;
  c.compute = DType::f16;
  c.loss_scale.initial_scale = 1e30f;  // overflows f16 at once
  c.loss_scale.growth_interval = 2;
  Trainer t = Trainer::mlp(m, c);
  const auto before = snapshot(t);
  const auto ids = random_ids(rng, 15, m.vocab), y = random_ids(rng, 15, m.vocab);
  StepResult r = t.step(ids, y);
  EXPECT_TRUE(r.skipped);
  EXPECT_EQ(r.loss_scale, 1e30f);
  EXPECT_EQ(t.loss_scale().scale, 0.5e30f);
  EXPECT_EQ(t.loss_scale().skipped_steps, 1);
  EXPECT_EQ(t.step_count(), 0);
  EXPECT_EQ(snapshot(t), before);  // nothing updated
  t.set_loss_scale({1024.0f, 0, 1});
  r = t.step(ids, y);
  EXPECT_FALSE(r.skipped);
  EXPECT_EQ(t.loss_scale().good_steps, 1);
  r = t.step(ids, y);
  EXPECT_FALSE(r.skipped);
  EXPECT_EQ(t.loss_scale().scale, 2048.0f);
  EXPECT_EQ(t.loss_scale().good_steps, 0);
  EXPECT_EQ(t.step_count(), 2);
  EXPECT_TRUE(std::isfinite(r.loss));
  EXPECT_NE(snapshot(t), before);
}

// fp16_node_totals: one entry per fp16 GEMM node, forward ones in the MI200 model's flush mode
// and backward ones in alt, with every run of step() counted (2 steps x 2 micro-batches); none
// for bf16 compute.
TEST(GraphTrainer, Fp16NodeTotalsCountEveryGemmOfEveryStep) {
  ampkit::testing::PolicyEnvScope env;
  set_fp16_device_model(Fp16DeviceModel::mi200);
  std::mt19937_64 rng(8);
  const MlpConfig m = small_mlp();
  TrainerConfig c;
  c.batch = 3;
  c.micro_batches = 2;
  c.compute = DType::f16;
  Trainer t = Trainer::mlp(m, c);
  EXPECT_TRUE(t.fp16_node_totals().empty());
  const auto ids = random_ids(rng, 30, m.vocab), y = random_ids(rng, 30, m.vocab);
  t.step(ids, y);
  t.step(ids, y);
  const std::vector<NodeFp16Totals> totals = t.fp16_node_totals();
  int forward = 0, backward = 0;
  for (const NodeFp16Totals& n : totals) {
    SCOPED_TRACE(n.name);
    EXPECT_EQ(n.mode, n.backward ? Fp16Mode::alt : Fp16Mode::flush);
    EXPECT_EQ(n.op, n.backward ? "LinearBackward" : "Linear");
    EXPECT_EQ(n.gemm_calls % 4, 0);  // the same GEMMs in each of the 4 runs
    EXPECT_GT(n.gemm_calls, 0);
    (n.backward ? backward : forward) += 1;
  }
  EXPECT_GT(forward, 0);
  EXPECT_EQ(forward, backward);
  c.compute = DType::bf16;
  Trainer b = Trainer::mlp(m, c);
  b.step(ids, y);
  EXPECT_TRUE(b.fp16_node_totals().empty());
}

TEST(GraphTrainer, CheckpointRestoresTheNextStepBitForBit) {
  std::mt19937_64 rng(7);
  const MlpConfig m = small_mlp();
  TrainerConfig c;
  c.batch = 3;
  c.optimizer.weight_decay = 0.01f;
  Trainer a = Trainer::mlp(m, c);
  for (int s = 0; s < 2; ++s) a.step(random_ids(rng, 15, m.vocab), random_ids(rng, 15, m.vocab));
  c.seed = 99;  // other initial values: everything must come from the checkpoint
  Trainer b = Trainer::mlp(m, c);
  for (const NamedTensor& n : a.tensors())
    b.set_tensor(n.name, std::span<const float>(n.data, static_cast<std::size_t>(n.numel())));
  b.set_step_count(a.step_count());
  b.set_loss_scale(a.loss_scale());
  EXPECT_EQ(snapshot(a), snapshot(b));
  const auto ids = random_ids(rng, 15, m.vocab), y = random_ids(rng, 15, m.vocab);
  EXPECT_EQ(a.step(ids, y).loss, b.step(ids, y).loss);
  EXPECT_EQ(snapshot(a), snapshot(b));
  EXPECT_EQ(a.parameter_names().size(), 5u);
  EXPECT_EQ(a.tensors().size(), 15u);  // 5 params + adam_m + adam_v
  expect_error([&] { b.set_tensor("nope", {}); }, "no tensor is named 'nope'");
  expect_error([&] { b.set_tensor("head.b", std::vector<float>(3)); }, "'head.b' has 9 elements, but got 3");
}

TEST(GraphTrainer, TinyGptLossFalls) {
  for (DType compute : {DType::f32, DType::bf16, DType::f16}) {
    SCOPED_TRACE(dtype_name(compute));
    GptConfig g;
    g.vocab = 16;
    g.seq_len = 8;
    g.dim = 16;
    g.heads = 2;
    g.layers = 2;
    TrainerConfig c;
    c.batch = 4;
    c.compute = compute;
    c.optimizer.lr = 3e-3f;
    c.clip_norm = 1.0f;
    Trainer t = Trainer::gpt(g, c);
    // A learnable stream: each sequence counts up from a random start (mod vocab); the target
    // is the next token.
    std::mt19937_64 rng(8);
    auto batch = [&](std::vector<std::int32_t>& ids, std::vector<std::int32_t>& y) {
      ids.resize(32);
      y.resize(32);
      for (int b = 0; b < 4; ++b) {
        const auto start = static_cast<std::int32_t>(rng() % 16);
        for (int i = 0; i < 8; ++i) {
          ids[static_cast<std::size_t>(b * 8 + i)] = (start + i) % 16;
          y[static_cast<std::size_t>(b * 8 + i)] = (start + i + 1) % 16;
        }
      }
    };
    std::vector<std::int32_t> ids, y;
    batch(ids, y);
    const double first = t.evaluate(ids, y);
    EXPECT_NEAR(first, std::log(16.0), 0.3);
    double last = first;
    for (int s = 0; s < 40; ++s) {
      batch(ids, y);
      last = t.step(ids, y).loss;
    }
    EXPECT_LT(last, 0.6 * first);
    std::vector<float> logits(4 * 8 * 16);
    t.logits(ids, logits);
    // The model should now predict the next count for most positions.
    int right = 0;
    for (int r = 0; r < 32; ++r) {
      const auto* row = &logits[static_cast<std::size_t>(r * 16)];
      right += static_cast<std::int32_t>(std::max_element(row, row + 16) - row) == y[static_cast<std::size_t>(r)];
    }
    EXPECT_GT(right, 16);
    bool forward = false, backward = false;
    for (const NodeTiming& n : t.node_timings()) {
      forward = forward || (!n.backward && n.op == "Attention");
      backward = backward || (n.backward && n.op == "AttentionBackward");
    }
    EXPECT_TRUE(forward && backward);
    EXPECT_NE(t.graph_dump().find("Attention("), std::string::npos);
  }
}

TEST(GraphTrainer, BadInputIsRefusedWithNothingChanged) {
  const MlpConfig m = small_mlp();
  TrainerConfig c = sgd_config(2, 1);
  Trainer t = Trainer::mlp(m, c);
  const auto before = snapshot(t);
  std::vector<std::int32_t> ids(10, 1), y(10, 1);
  y[7] = 9;
  expect_error([&] { t.step(ids, y); }, "targets[7] = 9 is out of range [0, 9)");
  expect_error([&] { t.step(std::vector<std::int32_t>(9, 0), y); }, "tokens must hold 2 x 5 = 10 ids, but got 9");
  EXPECT_EQ(snapshot(t), before);
  EXPECT_EQ(t.step_count(), 0);
  std::vector<float> out(3);
  expect_error([&] { t.logits(ids, out); }, "out must hold batch x seq_len x vocab = 90 floats");
  c.micro_batches = 0;
  expect_error([&] { Trainer::mlp(m, c); }, "micro_batches must be >= 1");
  c = sgd_config(2, 1);
  c.optimizer.beta1 = 1.0f;
  expect_error([&] { Trainer::mlp(m, c); }, "optimizer.beta1 must be in [0, 1)");
  c = sgd_config(2, 1);
  c.compute = DType::i32;
  expect_error([&] { Trainer::mlp(m, c); }, "compute must be f32, bf16 or f16");
  GptConfig g;
  g.dim = 6;
  g.heads = 4;
  expect_error([&] { Trainer::gpt(g, TrainerConfig{}); }, "dim (6) must be a multiple of heads (4)");
}

}  // namespace
}  // namespace ampkit::train
