// MultiTensorStep on the cpu (tests/ops/optimizer/): its stages against the per-parameter ops
// called the way the trainer called them before (accumulate with convert / add_accumulate, the
// norm and the check, clip, AdamW / SGD per parameter) bit for bit; the loss scale's backoff on
// an Inf and growth after the interval (train/loss_scaler.cpp's rule); a count outside the AdamW
// window; and bad input named by list position.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/optimizer.hpp"

namespace ampkit {
namespace {

// Bitwise equality of two float vectors (memcmp with no null argument when they are empty).
bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
}

struct Param {
  std::vector<float> w, g, m, v, src;
  std::int64_t n = 0;
  TensorView view(std::vector<float>& x) { return TensorView(x.data(), DType::f32, {n}); }
};

std::vector<Param> make(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<Param> ps;
  for (std::int64_t n : {0, 1, 4095, 4097, 33, 9000}) {
    Param p;
    p.n = n;
    for (auto* x : {&p.w, &p.g, &p.m, &p.v, &p.src}) {
      x->resize(static_cast<std::size_t>(n));
      for (float& e : *x) e = u(rng);
    }
    for (float& e : p.v) e = std::fabs(e) * 0.01f;
    ps.push_back(std::move(p));
  }
  return ps;
}

std::vector<MultiTensorParam> rows(std::vector<Param>& ps, bool accumulate) {
  std::vector<MultiTensorParam> out;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    MultiTensorParam q;
    q.param = ps[i].view(ps[i].w);
    q.grad = ps[i].view(ps[i].g);
    q.m = ps[i].view(ps[i].m);
    q.v = ps[i].view(ps[i].v);
    if (accumulate) {
      q.source = ps[i].view(ps[i].src);
      q.acc = q.grad;
    }
    q.decay = i % 2 == 0;
    out.push_back(q);
  }
  return out;
}

TEST(MultiTensorStep, AdamWWithAccumulationAndClipIsThePerParameterSequence) {
  std::vector<Param> a = make(7), b = make(7);
  StepRule rule;
  rule.clip_norm = 0.5;
  rule.divisor = 2.0;
  MultiTensorStep step(rows(a, true), rule, Device::cpu);
  EXPECT_STREQ(step.kernel_name(), "multi_tensor_step_cpu");
  for (int k = 1; k <= 2; ++k) {
    // The multi-tensor step: two micro-batches (the second source the first's times 0.5).
    step.accumulate(true, nullptr);
    for (Param& p : a)
      for (float& e : p.src) e *= 0.5f;
    step.accumulate(false, nullptr);
    step.decide();
    step.adamw({1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f, k});
    // The per-parameter sequence.
    std::vector<TensorView> grads;
    for (Param& p : b) {
      convert(p.view(p.src), p.view(p.g));
      for (float& e : p.src) e *= 0.5f;
      add_accumulate(p.view(p.src), p.view(p.g));
      grads.push_back(p.view(p.g));
    }
    const double unscale = 1.0 / (1.0 * 2.0);
    const double norm = global_grad_norm(grads) * unscale;
    ASSERT_TRUE(all_finite(grads));
    const double coef = norm > 0.5 ? 0.5 / (norm + 1e-6) : 1.0;
    for (std::size_t i = 0; i < b.size(); ++i) {
      AdamWArgs x;
      x.param = b[i].view(b[i].w);
      x.grad = grads[i];
      x.m = b[i].view(b[i].m);
      x.v = b[i].view(b[i].v);
      x.lr = 1e-2f;
      x.weight_decay = i % 2 == 0 ? 0.1f : 0.0f;
      x.grad_scale = static_cast<float>(unscale * coef);
      x.step = k;
      if (b[i].n > 0) adamw_step(x);
    }
    const StepScalars s = step.read();
    EXPECT_EQ(s.grad_norm, norm);
    EXPECT_EQ(s.steps, k);
    EXPECT_LT(coef, 1.0);
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(same_bits(a[i].w, b[i].w)) << i;
    EXPECT_TRUE(same_bits(a[i].m, b[i].m)) << i;
    EXPECT_TRUE(same_bits(a[i].v, b[i].v)) << i;
  }
}

TEST(MultiTensorStep, SgdIsThePerParameterSequence) {
  std::vector<Param> a = make(9), b = make(9);
  MultiTensorStep step(rows(a, false), StepRule{}, Device::cpu);
  step.decide();
  step.sgd({0.03f, 0.9f, 0.1f});
  for (std::size_t i = 0; i < b.size(); ++i) {
    SgdArgs x;
    x.param = b[i].view(b[i].w);
    x.grad = b[i].view(b[i].g);
    x.momentum_buffer = b[i].view(b[i].m);
    x.lr = 0.03f;
    x.momentum = 0.9f;
    x.weight_decay = i % 2 == 0 ? 0.1f : 0.0f;
    if (b[i].n > 0) sgd_step(x);
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(same_bits(a[i].w, b[i].w)) << i;
    EXPECT_TRUE(same_bits(a[i].m, b[i].m)) << i;
  }
}

TEST(MultiTensorStep, InfSkipsAndBacksOffThenGrowsAfterTheInterval) {
  std::vector<Param> a = make(3);
  a[2].g[100] = std::numeric_limits<float>::infinity();
  StepRule rule;
  rule.loss_scaling = true;
  rule.growth_interval = 2;
  MultiTensorStep step(rows(a, false), rule, Device::cpu, 0, 1024.0f);
  EXPECT_EQ(step.read().seed, 1024.0f);
  const std::vector<float> before = a[1].w;
  step.decide();
  step.adamw({1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 1});
  StepScalars s = step.read();
  EXPECT_EQ(s.skip, 1);
  EXPECT_EQ(s.steps, 0);
  EXPECT_EQ(s.skipped_steps, 1);
  EXPECT_EQ(s.loss_scale, 512.0f);
  EXPECT_EQ(s.seed, 512.0f);
  EXPECT_EQ(s.used_seed, 1024.0f);
  EXPECT_EQ(a[1].w, before);
  a[2].g[100] = 0.0f;
  for (int k = 0; k < 2; ++k) {
    step.decide();
    step.adamw({1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 1});
  }
  s = step.read();
  EXPECT_EQ(s.loss_scale, 1024.0f);
  EXPECT_EQ(s.good_steps, 0);
  EXPECT_EQ(s.steps, 2);
  EXPECT_NE(a[1].w, before);
  const std::vector<float> kept = a[1].w;
  step.decide();
  step.adamw({1e-3f, 0.9f, 0.999f, 1e-8f, 0.0f, 10});  // count 3 is outside [10, 14)
  EXPECT_EQ(step.read().window_miss, 1);
  EXPECT_EQ(a[1].w, kept);
}

TEST(MultiTensorStep, BadInputNamesTheListPosition) {
  std::vector<Param> a = make(1);
  std::vector<MultiTensorParam> r = rows(a, false);
  r[3].m = TensorView(a[0].m.data(), DType::f32, {a[0].n});
  try {
    MultiTensorStep step(r, StepRule{}, Device::cpu);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("params[3].m"), std::string::npos) << e.what();
  }
  std::vector<MultiTensorParam> plain = rows(a, false);
  for (MultiTensorParam& q : plain) q.v = TensorView();
  MultiTensorStep step(plain, StepRule{}, Device::cpu);
  try {
    step.adamw({});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs m and v"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ampkit
