// Tests of the causal attention kernels (kernels layer): every entry of both lists (before the
// reference) that this machine can run, under its own ISA cap (the others skip, saying why),
// against the double reference over seq 1, 2, 7, 33 (across the generic kernel's 32-row block),
// 67, 130 (across the vector kernels' 64-row block), heads 1, 3, head_dim 1, 5, 16, 33 (vector
// tails) and all 81 dtype combinations of q, k, v, out (the backward's dout, dq, dk, dv mixed in
// too), padded rows, accumulate mode, absent gradients and an explicit scale; 1, 2 and 3 threads
// bitwise; the reference backward against central finite differences of the double forward;
// causality (also with non-finite later keys and values); accumulate = old + fresh.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <tuple>

#include "cpu/attention/attention_kernels.hpp"
#include "ops/attention/attention_problem.hpp"
#include "ops/attention/attention_test_support.hpp"

namespace ampkit {
namespace {

using namespace attention_testing;

// Combination number n in [0, 81) as four dtypes (base-3 digits).
void combo(int n, DType* a, DType* b, DType* c, DType* d) {
  *a = kFloatDTypes[n % 3];
  *b = kFloatDTypes[n / 3 % 3];
  *c = kFloatDTypes[n / 9 % 3];
  *d = kFloatDTypes[n / 27 % 3];
}

// " f32 bf16 ..." for q, k, v, out, dout, dq, dk, dv.
std::string roles_text(const Roles& r) {
  std::ostringstream out;
  for (DType t : {r.q, r.k, r.v, r.out, r.dout, r.dq, r.dk, r.dv}) out << " " << dtype_name(t);
  return out.str();
}

std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (std::int64_t seq : {1, 2, 7, 33, 67})
    for (std::int64_t heads : {1, 3})
      for (std::int64_t head_dim : {1, 5, 16, 33}) out.push_back({2, seq, heads, head_dim});
  // Two vector row blocks (the backward's dk, dv sums run on across them); few, they cost time.
  for (Shape s : {Shape{2, 130, 1, 5}, Shape{2, 130, 1, 33}, Shape{1, 130, 3, 16}}) out.push_back(s);
  return out;
}

// Runs body(index) for each position of the two lists (forward and backward entries in pairs)
// whose entry this machine and AMPKIT_ISA allow, with the ISA cap set to the entry's; prints
// why the others are skipped. `with_reference`: the last position too.
template <class Body>
void for_each_kernel(bool with_reference, Body body) {
  const auto forward = ops::attention_forward_kernels();
  const auto backward = ops::attention_backward_kernels();
  ASSERT_EQ(forward.size(), backward.size());
  int tested = 0;
  for (std::size_t e = 0; e < forward.size(); ++e) {
    if (!with_reference && e + 1 == forward.size()) break;
    ASSERT_EQ(forward[e].needs.isa, backward[e].needs.isa) << forward[e].name;
    if (const char* why = ops::kernel_unavailable_reason(forward[e].needs)) {
      std::printf("[ SKIPPED  ] attention kernels %s / %s: %s\n", forward[e].name, backward[e].name, why);
      continue;
    }
    testing::IsaScope scope(forward[e].needs.isa);
    SCOPED_TRACE(::testing::Message() << forward[e].name << " / " << backward[e].name);
    body(e);
    ++tested;
  }
  EXPECT_GE(tested, 1);
}

// Points the problem's outputs at `c`'s buffers (the problems were decoded from another copy).
ops::AttentionForwardProblem forward_problem(Case& c) { return ops::validate_attention_forward(c.forward_args()); }
ops::AttentionBackwardProblem backward_problem(Case& c) { return ops::validate_attention_backward(c.backward_args()); }

TEST(AttentionKernels, EveryEntryMatchesTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto forward = ops::attention_forward_kernels();
  const auto backward = ops::attention_backward_kernels();
  ASSERT_EQ(forward.size(), backward.size());
  ASSERT_GE(forward.size(), 2u) << "a kernel and the reference";
  const std::vector<Shape> all = shapes();  // 43 shapes x 4 rounds: combos cover all of [0, 81)
  for_each_kernel(false, [&](std::size_t e) {
    for (int round = 0; round < 4; ++round)
      for (std::size_t si = 0; si < all.size(); ++si) {
        const Shape s = all[si];
        const int n = static_cast<int>((si + all.size() * static_cast<std::size_t>(round)) % 81);
        Roles r{};
        combo(n, &r.q, &r.k, &r.v, &r.out);
        combo((n * 7 + 11) % 81, &r.dout, &r.dq, &r.dk, &r.dv);
        SCOPED_TRACE(::testing::Message() << forward[e].name << " / " << backward[e].name << " [" << s.batch << ", "
                                          << s.seq << ", " << s.heads << " x " << s.head_dim
                                          << "] q/k/v/out/dout/dq/dk/dv" << roles_text(r) << " round " << round);
        Case got = make_case(rng, s, r, 3);
        got.scale = round == 2 ? 0.3f : 0.0f;
        got.accumulate = round % 2 == 1;
        if (round == 3) {  // one gradient absent
          got.has_dq = si % 3 != 0;
          got.has_dk = si % 3 != 1;
          got.has_dv = si % 3 != 2;
        }
        if (got.accumulate)
          for (Buffer* x : {&got.dq, &got.dk, &got.dv}) fill_elements(rng, got, *x);
        Case want = got;
        forward[e].run(forward_problem(got));
        forward.back().run(forward_problem(want));
        const Tolerances ft = tolerances(got, want, false);
        EXPECT_TRUE(near("out", got.out, want.out, [&](std::int64_t i) { return ft.out[i]; }));
        EXPECT_TRUE(near("lse", got.lse, want.lse, [&](std::int64_t i) { return ft.lse[i]; }));
        // Backward from the same out and lse (the reference's).
        got.out = want.out;
        got.lse = want.lse;
        backward[e].run(backward_problem(got));
        backward.back().run(backward_problem(want));
        const Tolerances bt = tolerances(got, want, true);
        EXPECT_TRUE(near("dq", got.dq, want.dq, [&](std::int64_t i) { return bt.dq[i]; }));
        EXPECT_TRUE(near("dk", got.dk, want.dk, [&](std::int64_t i) { return bt.dk[i]; }));
        EXPECT_TRUE(near("dv", got.dv, want.dv, [&](std::int64_t i) { return bt.dv[i]; }));
        if (::testing::Test::HasFailure()) return;
      }
  });
}

// Every fast entry gives the same bits with 1, 2 and 3 threads: shapes that split into several
// forward tasks per head (seq > 64) and many heads, an odd head_dim, mixed dtypes, accumulate.
TEST(AttentionKernels, OneTwoAndThreeThreadsGiveIdenticalBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto forward = ops::attention_forward_kernels();
  const auto backward = ops::attention_backward_kernels();
  for_each_kernel(false, [&](std::size_t e) {
    for (const Shape s : {Shape{3, 130, 3, 20}, Shape{4, 64, 4, 32}}) {
      Roles r = uniform_roles(DType::bf16);
      r.v = r.dk = DType::f32;
      r.dq = DType::f16;
      Case base = make_case(rng, s, r, 2);
      base.accumulate = true;
      for (Buffer* x : {&base.dq, &base.dk, &base.dv}) fill_elements(rng, base, *x);
      Case runs[3] = {base, base, base};
      for (int threads : {1, 2, 3}) {
        testing::ThreadsScope scope(threads);
        Case& c = runs[threads - 1];
        forward[e].run(forward_problem(c));
        backward[e].run(backward_problem(c));
      }
      for (int t = 1; t < 3; ++t) {
        SCOPED_TRACE(::testing::Message() << "[" << s.batch << ", " << s.seq << ", " << s.heads << " x " << s.head_dim
                                          << "], 1 vs " << t + 1 << " threads");
        EXPECT_TRUE(same_bytes("out", runs[0].out, runs[t].out));
        EXPECT_TRUE(same_bytes("lse", runs[0].lse, runs[t].lse));
        EXPECT_TRUE(same_bytes("dq", runs[0].dq, runs[t].dq));
        EXPECT_TRUE(same_bytes("dk", runs[0].dk, runs[t].dk));
        EXPECT_TRUE(same_bytes("dv", runs[0].dv, runs[t].dv));
      }
    }
  });
}

// Loss L = sum over out of G * out (G: c.dout) in double, from the unrounded reference forward.
double loss(const Case& c, const ops::AttentionForwardProblem& p) {
  const std::int64_t cols = c.cols;
  std::vector<double> out(static_cast<std::size_t>(c.s.batch * c.s.seq * cols));
  std::vector<double> lse(static_cast<std::size_t>(c.s.batch * c.s.heads * c.s.seq));
  cpu::attention_forward_reference_double(p, out.data(), lse.data());
  double sum = 0.0;
  for (std::int64_t b = 0; b < c.s.batch; ++b)
    for (std::int64_t i = 0; i < c.s.seq; ++i)
      for (std::int64_t x = 0; x < cols; ++x)
        sum += c.dout.get(c.index(b, i, x)) * out[static_cast<std::size_t>((b * c.s.seq + i) * cols + x)];
  return sum;
}

TEST(AttentionKernels, ReferenceBackwardMatchesFiniteDifferences) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for (float scale : {0.0f, 0.7f}) {
    Case c = make_case(rng, {2, 6, 2, 3}, uniform_roles(DType::f32), 1);
    c.scale = scale;
    const ops::AttentionForwardProblem fp = forward_problem(c);
    cpu::attention_forward_reference(fp);
    cpu::attention_backward_reference(backward_problem(c));
    struct Grad {
      const char* name;
      Buffer* x;
      const Buffer* g;
    };
    for (const Grad& grad : {Grad{"dq", &c.q, &c.dq}, Grad{"dk", &c.k, &c.dk}, Grad{"dv", &c.v, &c.dv}}) {
      auto* x = static_cast<float*>(grad.x->data());
      for (std::int64_t b = 0; b < c.s.batch; ++b)
        for (std::int64_t i = 0; i < c.s.seq; ++i)
          for (std::int64_t col = 0; col < c.cols; ++col) {
            const std::int64_t e = c.index(b, i, col);
            const float saved = x[e];
            const float plus = saved + 0x1p-13f, minus = saved - 0x1p-13f;
            x[e] = plus;
            const double lp = loss(c, fp);
            x[e] = minus;
            const double lm = loss(c, fp);
            x[e] = saved;
            const double fd = (lp - lm) / (double{plus} - double{minus});
            // Truncation h^2/6 |L'''| (h = 2^-13, |L'''| = O(10) for N(0, 1) inputs: < 1e-8);
            // the reference reads out and lse rounded to f32 (relative 2^-24 each, times sums of
            // |terms| below 50 here); its gradient is rounded to f32.
            EXPECT_NEAR(grad.g->get(e), fd, 1e-6 + 1e-6 * std::fabs(fd))
                << grad.name << " at [" << b << ", " << i << ", " << col << "] scale " << scale;
          }
    }
  }
}

TEST(AttentionKernels, OutputRowsDependOnlyOnEarlierPositions) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  constexpr std::int64_t kKeep = 4;  // rows 0..4 keep their values
  for_each_kernel(true, [&](std::size_t e) {
    for (bool non_finite : {false, true}) {  // later keys and values: other numbers, or Inf and NaN
      const auto& entry = ops::attention_forward_kernels()[e];
      SCOPED_TRACE(non_finite ? "Inf and NaN later" : "finite");
      Case a = make_case(rng, {2, 40, 3, 5}, uniform_roles(DType::bf16), 2);
      Case b = a;
      std::normal_distribution<double> dist(0.0, 1.0);
      for (std::int64_t bb = 0; bb < 2; ++bb)
        for (std::int64_t i = kKeep + 1; i < 40; ++i)
          for (std::int64_t x = 0; x < b.cols; ++x) {
            b.k.set(b.index(bb, i, x), non_finite ? (x % 2 == 0 ? INFINITY : NAN) : dist(rng));
            b.v.set(b.index(bb, i, x), non_finite ? (x % 2 == 0 ? NAN : -INFINITY) : dist(rng));
          }
      entry.run(forward_problem(a));
      entry.run(forward_problem(b));
      int changed = 0;
      for (std::int64_t bb = 0; bb < 2; ++bb)
        for (std::int64_t i = 0; i < 40; ++i)
          for (std::int64_t x = 0; x < a.cols; ++x) {
            const std::int64_t at = a.index(bb, i, x);
            const bool same = std::memcmp(static_cast<const char*>(a.out.data()) + 2 * at,
                                          static_cast<const char*>(b.out.data()) + 2 * at, 2) == 0;
            if (i <= kKeep) {
              EXPECT_TRUE(same) << "out[" << bb << ", " << i << ", " << x << "]";
            }
            changed += same ? 0 : 1;
          }
      for (std::int64_t bb = 0; bb < 2; ++bb)
        for (std::int64_t h = 0; h < 3; ++h)
          for (std::int64_t i = 0; i <= kKeep; ++i)
            EXPECT_EQ(a.lse.get(a.lse_index(bb, h, i)), b.lse.get(b.lse_index(bb, h, i)));
      EXPECT_GT(changed, 0) << "the later rows must see the changed keys and values";
    }
  });
}

TEST(AttentionKernels, AccumulateAddsToTheGradientsInFp32) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for_each_kernel(false, [&](std::size_t e) {
    Roles r = uniform_roles(DType::bf16);
    r.dq = r.dk = r.dv = DType::f32;
    Case fresh = make_case(rng, {2, 9, 2, 4}, r, 1);
    ops::attention_forward_kernels()[e].run(forward_problem(fresh));
    Case acc = fresh;
    acc.accumulate = true;
    for (Buffer* x : {&acc.dq, &acc.dk, &acc.dv}) fill_elements(rng, acc, *x);
    const Case old = acc;
    ops::attention_backward_kernels()[e].run(backward_problem(fresh));
    ops::attention_backward_kernels()[e].run(backward_problem(acc));
    // The kernel adds its fp32 result to the old value in fp32: exactly old + fresh, rounded.
    for (auto [name, a, f, o] :
         {std::tuple{"dq", &acc.dq, &fresh.dq, &old.dq}, std::tuple{"dk", &acc.dk, &fresh.dk, &old.dk},
          std::tuple{"dv", &acc.dv, &fresh.dv, &old.dv}})
      for (std::int64_t i = 0; i < a->size(); ++i) {
        const float sum = static_cast<float>(o->get(i)) + static_cast<float>(f->get(i));
        if (std::isnan(sum))
          EXPECT_TRUE(std::isnan(a->get(i))) << name << "[" << i << "] pad";
        else
          EXPECT_EQ(a->get(i), double{sum}) << name << "[" << i << "]";
      }
  });
}

}  // namespace
}  // namespace ampkit
