// Tests of softmax cross-entropy (kernels and ops layers): every entry of both kernel lists
// against the reference over edge shapes (classes around the 256-class block) and every dtype
// combination, tolerances from the fp32 sum chain and the output dtype; the reference gradient
// against central finite differences of the double loss; 1 vs 2 threads bitwise; the front end's
// in-place path and its messages (targets out of range name the row and value).
#include <gtest/gtest.h>

#include <cmath>

#include "ampkit/ops/softmax_cross_entropy.hpp"
#include "cpu/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"
#include "ops/elementwise/op_test_support.hpp"

namespace ampkit {
namespace {

using namespace ops_testing;

struct CeCase {
  Buffer logits, targets, loss, lse, dlogits;
  ops::SoftmaxCrossEntropyProblem problem;
};

CeCase make_case(std::mt19937_64& rng, DType tx, DType td, std::int64_t rows, std::int64_t classes, std::int64_t pad) {
  CeCase c;
  const std::int64_t stride = classes + pad;
  c.logits = random_buffer(rng, tx, rows * stride, 0.0, 3.0);
  c.targets = Buffer(DType::i32, rows);
  std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(classes - 1));
  auto* t = static_cast<std::int32_t*>(c.targets.data());
  for (std::int64_t r = 0; r < rows; ++r) t[r] = pick(rng);
  c.loss = Buffer(DType::f32, 1);
  c.lse = Buffer(DType::f32, rows);
  c.dlogits = Buffer(td, rows * stride);
  c.loss.poison();
  c.lse.poison();
  c.dlogits.poison();
  auto& p = c.problem;
  p.rows = rows;
  p.classes = classes;
  p.logits = c.logits.data();
  p.logits_dtype = tx;
  p.logits_row_stride = stride;
  p.targets = t;
  p.loss = static_cast<float*>(c.loss.data());
  p.lse = static_cast<float*>(c.lse.data());
  p.dloss = 1.5f;
  p.dlogits = c.dlogits.data();
  p.dlogits_dtype = td;
  p.dlogits_row_stride = stride;
  return c;
}

struct Shape {
  std::int64_t rows, classes;
};
constexpr Shape kShapes[] = {{1, 1}, {3, 7}, {5, 255}, {4, 256}, {2, 257}, {2, 1000}, {64, 50}};

TEST(SoftmaxCrossEntropy, EveryEntryMatchesTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto forward = cpu::softmax_cross_entropy_forward_kernels();
  const auto backward = cpu::softmax_cross_entropy_backward_kernels();
  for (std::size_t k = 0; k < forward.size(); ++k)
    for (DType tx : kFloatDTypes)
      for (DType td : kFloatDTypes)
        for (Shape s : kShapes) {
          SCOPED_TRACE(::testing::Message() << forward[k].name << " / " << backward[k].name << " "
                                            << dtypes_name({tx, td}) << " [" << s.rows << ", " << s.classes << "]");
          CeCase got = make_case(rng, tx, td, s.rows, s.classes, 3);
          CeCase want = got;
          want.problem.loss = static_cast<float*>(want.loss.data());
          want.problem.lse = static_cast<float*>(want.lse.data());
          want.problem.dlogits = want.dlogits.data();
          forward[k].run(got.problem);
          forward.back().run(want.problem);
          // Bounds: ampkit/numerics/error_bounds.hpp (cross_entropy_*).
          double worst = 0.0;
          EXPECT_TRUE(near("lse", got.lse, want.lse, [&](std::int64_t r) {
            const double t = error_bounds::cross_entropy_lse(s.classes, want.lse.get(r));
            worst = std::max(worst, t);
            return t;
          }));
          EXPECT_TRUE(near("loss", got.loss, want.loss,
                           [&](std::int64_t) { return error_bounds::cross_entropy_loss(worst, want.loss.get(0)); }));
          // Backward from the same lse (the reference's).
          got.lse = want.lse;
          got.problem.lse = static_cast<float*>(got.lse.data());
          backward[k].run(got.problem);
          backward.back().run(want.problem);
          const double scale = 1.5 / static_cast<double>(s.rows);  // |dloss| / rows
          const std::int64_t stride = s.classes + 3;
          EXPECT_TRUE(near("dlogits", got.dlogits, want.dlogits, [&](std::int64_t i) {
            return error_bounds::cross_entropy_dlogits(scale, got.logits.get(i), want.lse.get(i / stride),
                                                       want.dlogits.get(i), td);
          }));
        }
}

TEST(SoftmaxCrossEntropy, ReferenceGradientMatchesFiniteDifferences) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  CeCase c = make_case(rng, DType::f32, DType::f32, 3, 6, 0);
  c.problem.dloss = 1.0f;
  cpu::softmax_cross_entropy_forward_reference(c.problem);
  cpu::softmax_cross_entropy_backward_reference(c.problem);
  auto* x = static_cast<float*>(c.logits.data());
  for (std::int64_t i = 0; i < 18; ++i) {
    const float saved = x[i];
    const float plus = saved + 0x1p-12f, minus = saved - 0x1p-12f;
    x[i] = plus;
    const double lp = cpu::softmax_cross_entropy_loss_reference(c.problem);
    x[i] = minus;
    const double lm = cpu::softmax_cross_entropy_loss_reference(c.problem);
    x[i] = saved;
    const double fd = (lp - lm) / (double{plus} - double{minus});
    // truncation h^2/6 |L'''| (< 1e-8 here); the backward reads the f32-rounded lse, so
    // exp(x - lse) carries a relative error up to |lse| u32; the f32 rounding of the gradient.
    const double lse_error = std::fabs(c.lse.get(i / 6)) * kU32;
    EXPECT_NEAR(c.dlogits.get(i), fd, 1e-8 + 2.0 * (kU32 + lse_error) * (std::fabs(fd) + 1.0 / 3.0)) << "logit " << i;
  }
}

TEST(SoftmaxCrossEntropy, OneAndTwoThreadsGiveIdenticalBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const CeCase base = make_case(rng, DType::bf16, DType::bf16, 64, 600, 0);
  CeCase runs[2] = {base, base};
  for (int threads : {1, 2}) {
    testing::ThreadsScope scope(threads);
    CeCase& c = runs[threads - 1];
    TensorView logits = view_of(c.logits, {64, 600});
    softmax_cross_entropy_forward(logits, view_of(c.targets, {64}), view_of(c.loss, {}), view_of(c.lse, {64}));
    softmax_cross_entropy_backward(logits, view_of(c.targets, {64}), view_of(c.lse, {64}), 2.0f,
                                   logits);  // in place
  }
  EXPECT_TRUE(same_bytes("loss", runs[0].loss, runs[1].loss));
  EXPECT_TRUE(same_bytes("lse", runs[0].lse, runs[1].lse));
  EXPECT_TRUE(same_bytes("dlogits", runs[0].logits, runs[1].logits));
  // In place equals out of place.
  CeCase fresh = base;
  fresh.problem.lse = static_cast<float*>(runs[0].lse.data());
  fresh.problem.dloss = 2.0f;
  fresh.problem.logits = fresh.logits.data();
  fresh.problem.targets = static_cast<const std::int32_t*>(fresh.targets.data());
  fresh.problem.dlogits = fresh.dlogits.data();
  cpu::softmax_cross_entropy_backward_cpu(fresh.problem);
  EXPECT_TRUE(same_bytes("in-place dlogits", runs[0].logits, fresh.dlogits));
}

TEST(SoftmaxCrossEntropy, BadArgumentsAreRejectedAndNothingIsWritten) {
  std::mt19937_64 rng(1);
  CeCase c = make_case(rng, DType::f16, DType::f32, 3, 5, 0);
  static_cast<std::int32_t*>(c.targets.data())[2] = 9;
  const Buffer loss = c.loss, lse = c.lse, dlogits = c.dlogits;
  TensorView x = view_of(c.logits, {3, 5}), t = view_of(c.targets, {3});
  TensorView vl = view_of(c.loss, {1}), vs = view_of(c.lse, {3}), vd = view_of(c.dlogits, {3, 5});
  const char* fwd = "softmax_cross_entropy_forward: ";
  EXPECT_TRUE(throws_with([&] { softmax_cross_entropy_forward(x, t, vl, vs); },
                          {fwd, "targets[2] = 9 is out of range [0, 5)"}));
  EXPECT_TRUE(throws_with([&] { softmax_cross_entropy_backward(x, t, vs, 1.0f, vd); },
                          {"softmax_cross_entropy_backward: targets[2] = 9 is out of range [0, 5)"}));
  static_cast<std::int32_t*>(c.targets.data())[2] = -1;
  EXPECT_TRUE(
      throws_with([&] { softmax_cross_entropy_forward(x, t, vl, vs); }, {"targets[2] = -1 is out of range [0, 5)"}));
  static_cast<std::int32_t*>(c.targets.data())[2] = 0;
  EXPECT_TRUE(throws_with([&] { softmax_cross_entropy_forward(x, view_of(c.lse, {3}), vl, vs); },
                          {fwd, "targets dtype must be i32, but got f32"}));
  EXPECT_TRUE(throws_with([&] { softmax_cross_entropy_forward(x, t, view_of(c.lse, {2}), vs); },
                          {fwd, "loss must have shape [] or [1], but got [2]"}));
  EXPECT_TRUE(throws_with([&] { softmax_cross_entropy_forward(x, t, vl, view_of(c.lse, {2})); },
                          {fwd, "lse length must equal logits' rows (3), but got [2]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        softmax_cross_entropy_forward(view_of(c.logits, {0, 5}), view_of(c.targets, {0}), vl, view_of(c.lse, {0}));
      },
      {fwd, "at least one row"}));
  EXPECT_TRUE(throws_with(
      [&] {
        softmax_cross_entropy_forward(x, t, vl, view_of(c.loss, {1, 1}));
      },
      {fwd, "lse must have rank 1, but got shape [1, 1]"}));
  EXPECT_TRUE(throws_with([&] { softmax_cross_entropy_forward(x, t, TensorView(c.lse.data(), DType::f32, {1}), vs); },
                          {fwd, "loss", "must not overlap lse"}));
  EXPECT_TRUE(throws_with([&] { softmax_cross_entropy_backward(x, t, vs, INFINITY, vd); },
                          {"softmax_cross_entropy_backward: dloss must be finite, but got inf"}));
  EXPECT_TRUE(throws_with(
      [&] {
        softmax_cross_entropy_backward(x, t, vs, 1.0f, view_of(c.dlogits, {5, 3}));
      },
      {"dlogits shape must equal logits's shape [3, 5], but got [5, 3]"}));
  EXPECT_EQ(c.loss.bytes, loss.bytes);
  EXPECT_EQ(c.lse.bytes, lse.bytes);
  EXPECT_EQ(c.dlogits.bytes, dlogits.bytes);
}

}  // namespace
}  // namespace ampkit
