// The optimizer steps (kernels and ops layers): every entry of the AdamW and SGD lists against the
// reference for every grad and param_copy dtype, odd sizes around the 4096 block and several
// hyper-parameter sets (tolerances from the fp32 operation chain); the reference and the public
// calls against a hand-written double implementation over several steps (bias correction, weight
// decay, grad_scale, momentum); param_copy always the stored param rounded once; 1, 2 and 3
// threads bitwise.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "core/element.hpp"
#include "ops/elementwise/op_test_support.hpp"
#include "cpu/optimizer/optimizer_kernels.hpp"
#include "ops/optimizer/optimizer_test_support.hpp"

namespace ampkit {
namespace {

using namespace ops_testing;

constexpr std::int64_t kSizes[] = {1, 7, 4095, 4096, 4097, 40000};

// param_copy options: absent or one of the float dtypes.
const std::optional<DType> kCopies[] = {std::nullopt, DType::f32, DType::bf16, DType::f16};

std::string copy_name(std::optional<DType> c) { return c ? std::string(dtype_name(*c)) : std::string("no copy"); }

// ---------------------------------------------------------------------------------------------
// AdamW

struct AdamWHyper {
  float lr, beta1, beta2, eps, weight_decay, grad_scale;
  std::int64_t step;
};
constexpr AdamWHyper kAdamWHypers[] = {
    {1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0.5f, 1},
    {0.1f, 0.5f, 0.75f, 1e-3f, 0.0f, 1.0f, 7},
    {0.01f, 0.0f, 0.0f, 0.1f, 0.1f, -2.0f, 1000},
};

struct AdamWState {
  Buffer param, grad, m, v, copy;
  ops::AdamWProblem problem;
  void point() {  // the problem's pointers at this object's buffers
    problem.param = f32(param);
    problem.grad = grad.data();
    problem.m = f32(m);
    problem.v = f32(v);
    problem.param_copy = copy.size() > 0 ? copy.data() : nullptr;
  }
};

AdamWState make_adamw(std::mt19937_64& rng, std::int64_t n, DType tg, std::optional<DType> tc, const AdamWHyper& h) {
  AdamWState s;
  s.param = random_buffer(rng, DType::f32, n);
  s.grad = random_buffer(rng, tg, n);
  s.m = random_buffer(rng, DType::f32, n, 0.0, 0.1);
  s.v = random_buffer(rng, DType::f32, n, 0.0, 0.1);
  for (std::int64_t i = 0; i < n; ++i) s.v.set(i, s.v.get(i) * s.v.get(i));
  if (tc) {
    s.copy = Buffer(*tc, n);
    s.copy.poison();
  }
  auto& p = s.problem;
  p.n = n;
  p.grad_dtype = tg;
  p.param_copy_dtype = tc.value_or(DType::bf16);
  p.lr = h.lr;
  p.beta1 = h.beta1;
  p.beta2 = h.beta2;
  p.eps = h.eps;
  p.weight_decay = h.weight_decay;
  p.grad_scale = h.grad_scale;
  p.step = h.step;
  s.point();
  return s;
}

// Runs entry k on got and the reference on a copy; checks m, v and param against the bounds of
// error_bounds::adamw_step from the inputs (what the fp32 chain may lose). Returns the reference run.
template <typename Entry>
AdamWState run_and_compare(const Entry& k, const Entry& reference, AdamWState& got, const AdamWHyper& h) {
  AdamWState want = got;
  want.point();
  const AdamWState before = got;
  k.run(got.problem);
  reference.run(want.problem);
  const error_bounds::AdamWHyper eh{h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, h.grad_scale, h.step};
  const std::int64_t n = got.problem.n;
  std::vector<double> tol_m(n), tol_v(n), tol_p(n);
  for (std::int64_t i = 0; i < n; ++i) {
    const error_bounds::AdamWBound b = error_bounds::adamw_step(eh, before.param.get(i), before.grad.get(i),
                                                                before.m.get(i), before.v.get(i), want.param.get(i));
    tol_m[i] = b.m, tol_v[i] = b.v, tol_p[i] = b.param;
  }
  EXPECT_TRUE(near("m", got.m, want.m, [&](std::int64_t i) { return tol_m[i]; }));
  EXPECT_TRUE(near("v", got.v, want.v, [&](std::int64_t i) { return tol_v[i]; }));
  EXPECT_TRUE(near("param", got.param, want.param, [&](std::int64_t i) { return tol_p[i]; }));
  want.point();
  return want;
}

TEST(AdamW, EveryEntryMatchesTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto kernels = cpu::adamw_kernels();
  for (const auto& k : kernels)
    for (DType tg : kFloatDTypes)
      for (std::optional<DType> tc : kCopies)
        for (std::int64_t n : kSizes)
          for (const AdamWHyper& h : kAdamWHypers) {
            if (n > 4097 && &h != &kAdamWHypers[0]) continue;  // the parallel path: one set
            SCOPED_TRACE(::testing::Message() << k.name << " grad " << dtype_name(tg) << ", " << copy_name(tc) << ", n "
                                              << n << ", step " << h.step);
            AdamWState got = make_adamw(rng, n, tg, tc, h);
            const AdamWState before = got;
            const AdamWState want = run_and_compare(k, kernels.back(), got, h);
            if (tc) {
              EXPECT_TRUE(copy_is_rounded_param(got.param, got.copy));
              EXPECT_TRUE(copy_is_rounded_param(want.param, want.copy));
            }
            EXPECT_TRUE(same_bytes("grad", got.grad, before.grad));
          }
}

TEST(AdamW, EveryEntryMeetsTheBoundWhenTheStateIsSubnormal) {
  // Gradients of 2^-90..2^-55 (so g^2 is an fp32 subnormal or underflows), m and v fp32
  // subnormals: every rounding of the fp32 chain may then be off by half the subnormal spacing,
  // 2^-150, whatever the value; a purely relative tolerance on v (or m) cannot hold.
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-90, -55);
  const auto kernels = cpu::adamw_kernels();
  const std::int64_t n = 4097;
  for (const auto& k : kernels)
    for (const AdamWHyper& h : kAdamWHypers) {
      SCOPED_TRACE(::testing::Message() << k.name << ", step " << h.step);
      AdamWState got = make_adamw(rng, n, DType::f32, std::nullopt, h);
      for (std::int64_t i = 0; i < n; ++i) {
        got.grad.set(i, std::ldexp(unit(rng), expo(rng)));
        got.m.set(i, std::ldexp(unit(rng), -128));
        got.v.set(i, std::ldexp(std::fabs(unit(rng)), -127));
      }
      got.point();
      const AdamWState before = got;
      const AdamWState want = run_and_compare(k, kernels.back(), got, h);
      const error_bounds::AdamWHyper eh{h.lr, h.beta1, h.beta2, h.eps, h.weight_decay, h.grad_scale, h.step};
      for (std::int64_t i = 0; i < n; ++i)  // the absolute term: a few subnormal steps, no licence
        ASSERT_LE(error_bounds::adamw_step(eh, before.param.get(i), before.grad.get(i), before.m.get(i),
                                           before.v.get(i), want.param.get(i))
                      .v,
                  6.0 * 0x1p-24 * std::fabs(want.v.get(i)) + 0x1p-147);
    }
}

// The hand-written AdamW: double state, never rounded.
struct DoubleAdamW {
  std::vector<double> param, m, v;
  // Per element, the largest magnitudes seen: for the tolerance of the fp32 run.
  std::vector<double> m_terms, v_terms, ratio, param_max;
  explicit DoubleAdamW(const Buffer& p) {
    const auto n = static_cast<std::size_t>(p.size());
    param.resize(n);
    for (std::size_t i = 0; i < n; ++i) param[i] = p.get(static_cast<std::int64_t>(i));
    m.assign(n, 0.0);
    v.assign(n, 0.0);
    m_terms.assign(n, 0.0);
    v_terms.assign(n, 0.0);
    ratio.assign(n, 0.0);
    param_max = param;
    for (double& x : param_max) x = std::fabs(x);
  }
  void step(const Buffer& grad, const AdamWHyper& h, std::int64_t step) {
    const double b1 = h.beta1, b2 = h.beta2, lr = h.lr, eps = h.eps, wd = h.weight_decay;
    for (std::size_t i = 0; i < param.size(); ++i) {
      const double g = grad.get(static_cast<std::int64_t>(i)) * double{h.grad_scale};
      const double m_new = b1 * m[i] + (1.0 - b1) * g;
      const double v_new = b2 * v[i] + (1.0 - b2) * g * g;
      const double m_hat = m_new / (1.0 - std::pow(b1, static_cast<double>(step)));
      const double v_hat = v_new / (1.0 - std::pow(b2, static_cast<double>(step)));
      const double denom = std::sqrt(v_hat) + eps;
      const double bc1 = 1.0 - std::pow(b1, static_cast<double>(step));
      m_terms[i] = std::max(m_terms[i], b1 * std::fabs(m[i]) + (1.0 - b1) * std::fabs(g));
      v_terms[i] = std::max(v_terms[i], b2 * v[i] + (1.0 - b2) * g * g);
      ratio[i] = std::max(ratio[i], (std::fabs(m_hat) + m_terms[i] / bc1) / denom);
      // Decoupled decay from the parameter before the step.
      param[i] = param[i] - lr * m_hat / denom - lr * wd * param[i];
      m[i] = m_new;
      v[i] = v_new;
      param_max[i] = std::max(param_max[i], std::fabs(param[i]));
    }
  }
};

TEST(AdamW, ReferenceFollowsTheHandWrittenFormulaStepByStep) {
  // Each step of the reference from its own (f32) state against the hand-written double step
  // from the same state: both in double, rounded once, so at most one f32 ulp apart.
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const AdamWHyper h{0.05f, 0.9f, 0.99f, 1e-6f, 0.2f, 0.125f, 1};
  AdamWState s = make_adamw(rng, 300, DType::bf16, DType::bf16, h);
  for (std::int64_t i = 0; i < 300; ++i) s.m.set(i, 0.0), s.v.set(i, 0.0);
  for (std::int64_t step = 1; step <= 8; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    s.grad = random_buffer(rng, DType::bf16, 300, 0.0, 4.0);
    s.point();
    s.problem.step = step;
    DoubleAdamW d(s.param);
    for (std::int64_t i = 0; i < 300; ++i) {
      d.m[static_cast<std::size_t>(i)] = s.m.get(i);
      d.v[static_cast<std::size_t>(i)] = s.v.get(i);
    }
    d.step(s.grad, h, step);
    cpu::adamw_reference(s.problem);
    for (std::int64_t i = 0; i < 300; ++i) {
      const auto j = static_cast<std::size_t>(i);
      EXPECT_NEAR(s.param.get(i), d.param[j], 0x1p-23 * std::fabs(d.param[j])) << "param " << i;
      EXPECT_NEAR(s.m.get(i), d.m[j], 0x1p-23 * std::fabs(d.m[j])) << "m " << i;
      EXPECT_NEAR(s.v.get(i), d.v[j], 0x1p-23 * std::fabs(d.v[j])) << "v " << i;
    }
    EXPECT_TRUE(copy_is_rounded_param(s.param, s.copy));
  }
}

TEST(AdamW, PublicStepsFollowTheHandWrittenDoubleRun) {
  // Ten steps through adamw_step (the selected kernel, fp32 state) against the hand-written double
  // run (double state): the fp32 errors of each step, carried along, stay within the bound.
  // Bias correction (10x at step 1), weight decay and grad_scale each move the parameters far more.
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::int64_t n = 5000, steps = 10;
  for (DType tg : kFloatDTypes) {
    SCOPED_TRACE(::testing::Message() << "grad " << dtype_name(tg));
    const AdamWHyper h{0.01f, 0.9f, 0.999f, 1e-8f, 0.1f, 0.25f, 0};
    Buffer param = random_buffer(rng, DType::f32, n), m(DType::f32, n), v(DType::f32, n);
    Buffer copy(DType::bf16, n);
    DoubleAdamW d(param);
    for (std::int64_t step = 1; step <= steps; ++step) {
      Buffer grad = random_buffer(rng, tg, n, 0.1, 2.0);
      AdamWArgs a;
      a.param = view_of(param, {n / 50, 50});
      a.grad = view_of(grad, {n / 50, 50});
      a.m = view_of(m, {n / 50, 50});
      a.v = view_of(v, {n / 50, 50});
      a.param_copy = view_of(copy, {n / 50, 50});
      a.lr = h.lr;
      a.beta1 = h.beta1;
      a.beta2 = h.beta2;
      a.eps = h.eps;
      a.weight_decay = h.weight_decay;
      a.grad_scale = h.grad_scale;
      a.step = step;
      adamw_step(a);
      d.step(grad, h, step);
    }
    const double u = kU32, k = static_cast<double>(steps);
    int bad = 0;
    for (std::int64_t i = 0; i < n && bad < 5; ++i) {
      const auto j = static_cast<std::size_t>(i);
      // m's error decays by beta1 per step, so it carries up to 1 / (1 - beta1) = 10 steps' worth.
      const double tol_m = 10.0 * 5.0 * u * d.m_terms[j];
      const double tol_v = k * 6.0 * u * d.v_terms[j];
      const double tol_p = k * (4.0 * u * d.param_max[j] + double{h.lr} * 64.0 * u * (d.ratio[j] + 10.0 * d.ratio[j]));
      if (std::fabs(m.get(i) - d.m[j]) > tol_m || std::fabs(v.get(i) - d.v[j]) > tol_v ||
          std::fabs(param.get(i) - d.param[j]) > tol_p) {
        ++bad;
        ADD_FAILURE() << "element " << i << ": param " << param.get(i) << " vs " << d.param[j] << " (tol " << tol_p
                      << "), m " << m.get(i) << " vs " << d.m[j] << " (tol " << tol_m << "), v " << v.get(i) << " vs "
                      << d.v[j] << " (tol " << tol_v << ")";
      }
    }
    EXPECT_TRUE(copy_is_rounded_param(param, copy));
  }
}

// ---------------------------------------------------------------------------------------------
// SGD

struct SgdHyper {
  float lr, momentum, weight_decay, grad_scale;
  bool buffer;  // momentum_buffer given
};
constexpr SgdHyper kSgdHypers[] = {
    {0.1f, 0.0f, 0.0f, 1.0f, false},
    {0.1f, 0.0f, 0.01f, 0.5f, true},  // buffer given with momentum 0: set to g
    {0.01f, 0.9f, 1e-4f, 2.0f, true},
    {1.5f, 0.5f, 0.25f, -0.125f, true},
};

struct SgdState {
  Buffer param, grad, buf, copy;
  ops::SgdProblem problem;
  void point() {
    problem.param = f32(param);
    problem.grad = grad.data();
    problem.momentum_buffer = buf.size() > 0 ? f32(buf) : nullptr;
    problem.param_copy = copy.size() > 0 ? copy.data() : nullptr;
  }
};

SgdState make_sgd(std::mt19937_64& rng, std::int64_t n, DType tg, std::optional<DType> tc, const SgdHyper& h) {
  SgdState s;
  s.param = random_buffer(rng, DType::f32, n);
  s.grad = random_buffer(rng, tg, n);
  if (h.buffer) {
    s.buf = random_buffer(rng, DType::f32, n, 0.0, 0.5);
    if (h.momentum == 0.0f) s.buf.poison();  // not read
  }
  if (tc) {
    s.copy = Buffer(*tc, n);
    s.copy.poison();
  }
  auto& p = s.problem;
  p.n = n;
  p.grad_dtype = tg;
  p.param_copy_dtype = tc.value_or(DType::bf16);
  p.lr = h.lr;
  p.momentum = h.momentum;
  p.weight_decay = h.weight_decay;
  p.grad_scale = h.grad_scale;
  s.point();
  return s;
}

TEST(Sgd, EveryEntryMatchesTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto kernels = cpu::sgd_kernels();
  for (const auto& k : kernels)
    for (DType tg : kFloatDTypes)
      for (std::optional<DType> tc : kCopies)
        for (std::int64_t n : kSizes)
          for (const SgdHyper& h : kSgdHypers) {
            if (n > 4097 && &h != &kSgdHypers[2]) continue;  // the parallel path: one set
            SCOPED_TRACE(::testing::Message() << k.name << " grad " << dtype_name(tg) << ", " << copy_name(tc) << ", n "
                                              << n << ", momentum " << h.momentum << ", buffer " << h.buffer);
            SgdState got = make_sgd(rng, n, tg, tc, h);
            SgdState want = got;
            want.point();
            const SgdState before = got;
            k.run(got.problem);
            kernels.back().run(want.problem);
            std::vector<double> tol_d(n), tol_p(n);
            for (std::int64_t i = 0; i < n; ++i) {
              const double b = h.momentum != 0.0f ? before.buf.get(i) : 0.0;
              const error_bounds::SgdBound e =
                  error_bounds::sgd_step(h.lr, h.momentum, h.weight_decay, h.grad_scale, before.param.get(i),
                                         before.grad.get(i), b, want.param.get(i));
              tol_d[i] = e.buf, tol_p[i] = e.param;
            }
            EXPECT_TRUE(near("param", got.param, want.param, [&](std::int64_t i) { return tol_p[i]; }));
            if (h.buffer) {
              EXPECT_TRUE(near("momentum_buffer", got.buf, want.buf, [&](std::int64_t i) { return tol_d[i]; }));
            }
            if (tc) {
              EXPECT_TRUE(copy_is_rounded_param(got.param, got.copy));
              EXPECT_TRUE(copy_is_rounded_param(want.param, want.copy));
            }
          }
}

TEST(Sgd, PublicStepsFollowTheHandWrittenDoubleRun) {
  // PyTorch's SGD (dampening 0, not Nesterov) written out in double, against sgd_step over ten
  // steps, with and without momentum.
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::int64_t n = 3000, steps = 10;
  for (float momentum : {0.0f, 0.9f})
    for (DType tg : kFloatDTypes) {
      SCOPED_TRACE(::testing::Message() << "momentum " << momentum << ", grad " << dtype_name(tg));
      const float lr = 0.05f, wd = 0.01f, scale = 0.5f;
      Buffer param = random_buffer(rng, DType::f32, n), buf(DType::f32, n), copy(DType::f16, n);
      std::vector<double> p(n), b(n, 0.0), terms(n, 0.0), p_max(n);
      for (std::int64_t i = 0; i < n; ++i) p[i] = param.get(i), p_max[i] = std::fabs(p[i]);
      for (std::int64_t step = 1; step <= steps; ++step) {
        Buffer grad = random_buffer(rng, tg, n, 0.0, 3.0);
        SgdArgs a;
        a.param = view_of(param, {n});
        a.grad = view_of(grad, {n});
        if (momentum != 0.0f) a.momentum_buffer = view_of(buf, {n});
        a.param_copy = view_of(copy, {n});
        a.lr = lr;
        a.momentum = momentum;
        a.weight_decay = wd;
        a.grad_scale = scale;
        sgd_step(a);
        for (std::int64_t i = 0; i < n; ++i) {
          const double g = grad.get(i) * double{scale} + double{wd} * p[i];
          terms[i] = std::max(terms[i], std::fabs(grad.get(i) * double{scale}) + std::fabs(double{wd} * p[i]) +
                                            std::fabs(double{momentum} * b[i]));
          b[i] = double{momentum} * b[i] + g;
          p[i] -= double{lr} * (momentum != 0.0f ? b[i] : g);
          p_max[i] = std::max(p_max[i], std::fabs(p[i]));
        }
      }
      const double u = kU32, k = static_cast<double>(steps);
      int bad = 0;
      for (std::int64_t i = 0; i < n && bad < 5; ++i) {
        const double tol_b = 10.0 * 4.0 * u * terms[i];  // carried with factor 0.9 per step
        const double tol_p = k * (2.0 * u * p_max[i] + double{lr} * (tol_b + 4.0 * u * terms[i]));
        const bool buf_bad = momentum != 0.0f && std::fabs(buf.get(i) - b[i]) > tol_b;
        if (std::fabs(param.get(i) - p[i]) > tol_p || buf_bad) {
          ++bad;
          ADD_FAILURE() << "element " << i << ": param " << param.get(i) << " vs " << p[i] << " (tol " << tol_p
                        << "), buffer " << buf.get(i) << " vs " << b[i];
        }
      }
      EXPECT_TRUE(copy_is_rounded_param(param, copy));
    }
}

TEST(Optimizer, StepsGiveIdenticalBitsOnOneTwoAndThreeThreads) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::int64_t n = 100003;
  const AdamWHyper h{1e-3f, 0.9f, 0.999f, 1e-8f, 0.01f, 0.5f, 3};
  const AdamWState adam = make_adamw(rng, n, DType::bf16, DType::bf16, h);
  const SgdState sgd = make_sgd(rng, n, DType::f16, DType::f16, kSgdHypers[2]);
  AdamWState adams[3] = {adam, adam, adam};
  SgdState sgds[3] = {sgd, sgd, sgd};
  for (int t = 0; t < 3; ++t) {
    testing::ThreadsScope scope(t + 1);
    adams[t].point();
    sgds[t].point();
    ops::select_kernel(cpu::adamw_kernels(), adams[t].problem).run(adams[t].problem);
    ops::select_kernel(cpu::sgd_kernels(), sgds[t].problem).run(sgds[t].problem);
  }
  for (int t = 1; t < 3; ++t) {
    SCOPED_TRACE(::testing::Message() << "1 thread vs " << t + 1);
    EXPECT_TRUE(same_bytes("adamw param", adams[0].param, adams[t].param));
    EXPECT_TRUE(same_bytes("adamw m", adams[0].m, adams[t].m));
    EXPECT_TRUE(same_bytes("adamw v", adams[0].v, adams[t].v));
    EXPECT_TRUE(same_bytes("adamw copy", adams[0].copy, adams[t].copy));
    EXPECT_TRUE(same_bytes("sgd param", sgds[0].param, sgds[t].param));
    EXPECT_TRUE(same_bytes("sgd buffer", sgds[0].buf, sgds[t].buf));
    EXPECT_TRUE(same_bytes("sgd copy", sgds[0].copy, sgds[t].copy));
  }
}

}  // namespace
}  // namespace ampkit
