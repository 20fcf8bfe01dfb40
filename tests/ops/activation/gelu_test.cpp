// Tests of GELU (kernels and ops layers): every entry of gelu_kernels() against the reference on
// fresh random inputs, every dtype combination and variant, forward and backward, with tolerances
// from gelu_math.hpp's documented accuracy and the output dtype; the reference's derivative
// against central finite differences of its forward in double; 1 vs 2 threads bitwise equal; the
// front end's in-place path and its messages.
#include <gtest/gtest.h>

#include <cmath>

#include "ampkit/ops/activation.hpp"
#include "cpu/activation/activation_kernels.hpp"
#include "ops/elementwise/op_test_support.hpp"

namespace ampkit {
namespace {

using namespace ops_testing;

constexpr GeluVariant kVariants[] = {GeluVariant::tanh, GeluVariant::erf};

struct GeluCase {
  Buffer x, dy, out;
  ops::GeluProblem problem;
};

GeluCase make_case(std::mt19937_64& rng, bool backward, GeluVariant v, DType tx, DType td, DType to, std::int64_t rows,
                   std::int64_t n) {
  GeluCase c;
  c.x = random_buffer(rng, tx, rows * n, 0.0, 3.0);
  c.dy = random_buffer(rng, td, rows * n);
  c.out = Buffer(to, rows * n);
  c.out.poison();
  auto& p = c.problem;
  p.rows = rows;
  p.n = n;
  p.backward = backward;
  p.variant = v;
  p.x = c.x.data();
  p.x_dtype = tx;
  p.x_row_stride = n;
  p.dy = backward ? c.dy.data() : nullptr;
  p.dy_dtype = td;
  p.dy_row_stride = n;
  p.out = c.out.data();
  p.out_dtype = to;
  p.out_row_stride = n;
  return c;
}

TEST(Gelu, EveryEntryMatchesTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto kernels = cpu::gelu_kernels();
  for (const auto& k : kernels)
    for (GeluVariant v : kVariants)
      for (bool backward : {false, true})
        for (DType tx : kFloatDTypes)
          for (DType td : kFloatDTypes)
            for (DType to : kFloatDTypes) {
              if (!backward && td != DType::f32) continue;
              SCOPED_TRACE(::testing::Message() << k.name << " variant " << static_cast<int>(v) << " backward "
                                                << backward << " " << dtypes_name({tx, td, to}));
              GeluCase c = make_case(rng, backward, v, tx, td, to, 3, 2049);
              Buffer want(to, c.out.size());
              ops::GeluProblem ref = c.problem;
              ref.out = want.data();
              k.run(c.problem);
              kernels.back().run(ref);
              // gelu_math: gelu within 8 u32 |x|, gelu' within 8 u32 (absolute); then one
              // rounding to out in both.
              EXPECT_TRUE(near("out", c.out, want, [&](std::int64_t i) {
                return backward ? error_bounds::gelu_backward_output(c.dy.get(i), want.get(i), to)
                                : error_bounds::gelu_forward_output(c.x.get(i), want.get(i), to);
              }));
            }
}

TEST(Gelu, ReferenceDerivativeMatchesFiniteDifferences) {
  // Central differences of the reference forward in f32 storage would lose the digits; the
  // reference keeps double until its one rounding, so evaluate it on f32 inputs x +- h that are
  // exact and compare slopes with an error bound of the difference quotient.
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for (GeluVariant v : kVariants) {
    const std::int64_t n = 257;
    const double h = 1.0 / 1024.0;  // x +- h exact in f32 for |x| < 2^13
    Buffer x = random_buffer(rng, DType::f32, n, 0.0, 3.0);
    Buffer xp(DType::f32, n), xm(DType::f32, n), one(DType::f32, n);
    for (std::int64_t i = 0; i < n; ++i) xp.set(i, x.get(i) + h), xm.set(i, x.get(i) - h), one.set(i, 1.0);
    Buffer yp(DType::f32, n), ym(DType::f32, n), slope(DType::f32, n);
    ops::GeluProblem p{1, n, false, v, xp.data(), DType::f32, n, nullptr, DType::f32, n, yp.data(), DType::f32, n};
    cpu::gelu_reference(p);
    p.x = xm.data();
    p.out = ym.data();
    cpu::gelu_reference(p);
    p = {1, n, true, v, x.data(), DType::f32, n, one.data(), DType::f32, n, slope.data(), DType::f32, n};
    cpu::gelu_reference(p);
    for (std::int64_t i = 0; i < n; ++i) {
      const double fd = (yp.get(i) - ym.get(i)) / (2.0 * h);
      // truncation h^2/6 |gelu'''| (<= 1) plus f32 rounding of the two values / 2h
      const double bound = h * h / 6.0 + 2.0 * kU32 * (std::fabs(yp.get(i)) + 1.0) / (2.0 * h);
      EXPECT_NEAR(slope.get(i), fd, bound + 2.0 * kU32) << "x = " << x.get(i);
    }
  }
}

TEST(Gelu, OneAndTwoThreadsGiveIdenticalBitsAndInPlaceWorks) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  Buffer x = random_buffer(rng, DType::bf16, 64 * 300, 0.0, 2.0);
  Buffer dy = random_buffer(rng, DType::bf16, 64 * 300);
  Buffer outs[2] = {Buffer(DType::bf16, 64 * 300), Buffer(DType::bf16, 64 * 300)};
  for (int threads : {1, 2}) {
    testing::ThreadsScope scope(threads);
    outs[threads - 1] = dy;  // in place: dx is dy
    gelu_backward(view_of(x, {64, 300}), view_of(outs[threads - 1], {64, 300}), view_of(outs[threads - 1], {64, 300}),
                  GeluVariant::erf);
  }
  EXPECT_TRUE(same_bytes("dx", outs[0], outs[1]));
  Buffer want(DType::bf16, 64 * 300);
  ops::GeluProblem p{64,        300,         true, GeluVariant::erf, x.data(),    DType::bf16, 300,
                     dy.data(), DType::bf16, 300,  want.data(),      DType::bf16, 300};
  cpu::gelu_cpu(p);
  EXPECT_TRUE(same_bytes("in-place dx", outs[0], want));
}

TEST(Gelu, BadArgumentsAreRejectedAndNothingIsWritten) {
  Buffer x(DType::f32, 6), y(DType::f16, 6), ids(DType::i32, 6);
  y.poison();
  const Buffer untouched = y;
  EXPECT_TRUE(throws_with(
      [&] {
        gelu_forward(view_of(x, {2, 3}), view_of(y, {3, 2}), GeluVariant::tanh);
      },
      {"gelu_forward: y shape must equal x's shape [2, 3], but got [3, 2]"}));
  EXPECT_TRUE(throws_with([&] { gelu_forward(view_of(x, {6}), view_of(y, {6}), static_cast<GeluVariant>(7)); },
                          {"gelu_forward: variant must be", "but got the value 7"}));
  EXPECT_TRUE(throws_with([&] { gelu_backward(view_of(x, {6}), view_of(ids, {6}), view_of(y, {6}), GeluVariant::erf); },
                          {"gelu_backward: dy dtype must be f32, bf16 or f16, but got i32"}));
  EXPECT_TRUE(throws_with(
      [&] { gelu_backward(view_of(x, {6}), view_of(y, {6}), TensorView(x.data(), DType::f32, {6}), GeluVariant::erf); },
      {"gelu_backward: dx", "must not overlap x"}));
  EXPECT_EQ(y.bytes, untouched.bytes);
}

}  // namespace
}  // namespace ampkit
