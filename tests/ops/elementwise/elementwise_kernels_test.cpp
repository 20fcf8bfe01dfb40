// Tests of the elementwise and row-sum kernels (kernels layer): every entry of
// elementwise_kernels() and sum_rows_kernels() against the reference on fresh random inputs over
// edge shapes, every dtype combination, broadcast and padded rows; tolerances from the dtypes and
// the reduction length; 1 vs 2 threads bitwise equal.
#include <gtest/gtest.h>

#include <cmath>

#include "ampkit/core/threading.hpp"
#include "cpu/elementwise/elementwise_kernels.hpp"
#include "ops/elementwise/op_test_support.hpp"

namespace ampkit {
namespace {

using namespace ops_testing;

struct Shape {
  std::int64_t rows, n;
};
constexpr Shape kShapes[] = {{1, 1}, {1, 4097}, {3, 5}, {7, 63}, {5, 64}, {17, 65}, {33, 130}};

// a: [rows, n] with row stride n + pad, b: [rows, n] or a broadcast row, out: [rows, n + pad].
struct AddCase {
  Buffer a, b, out;
  ops::ElementwiseProblem problem;
};

AddCase make_add(std::mt19937_64& rng, Shape s, DType ta, DType tb, DType to, bool add, bool broadcast,
                 std::int64_t pad) {
  AddCase c;
  const std::int64_t stride = s.n + pad;
  c.a = random_buffer(rng, ta, s.rows * stride);
  c.b = random_buffer(rng, tb, broadcast ? s.n : s.rows * s.n);
  c.out = Buffer(to, s.rows * stride);
  c.out.poison();
  auto& p = c.problem;
  p.rows = s.rows;
  p.n = s.n;
  p.a = {c.a.data(), ta, stride};
  if (add) p.b = {c.b.data(), tb, broadcast ? 0 : s.n};
  p.alpha = add ? 1.0f : -1.75f;
  p.out = c.out.data();
  p.out_dtype = to;
  p.out_row_stride = stride;
  return c;
}

TEST(ElementwiseKernels, EveryEntryMatchesTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto kernels = cpu::elementwise_kernels();
  for (const auto& k : kernels) {
    if (ops::decline_reason(k, ops::ElementwiseProblem{}) != nullptr) continue;
    for (DType ta : kFloatDTypes)
      for (DType tb : kFloatDTypes)
        for (DType to : kFloatDTypes)
          for (Shape s : kShapes)
            for (int mode = 0; mode < 3; ++mode) {  // add, add broadcast row, scale
              SCOPED_TRACE(::testing::Message() << k.name << " " << dtypes_name({ta, tb, to}) << " [" << s.rows << ", "
                                                << s.n << "] mode " << mode);
              AddCase c = make_add(rng, s, ta, tb, to, mode < 2, mode == 1, 3);
              Buffer want(to, c.out.size());
              want.poison();
              ops::ElementwiseProblem ref = c.problem;
              ref.out = want.data();
              k.run(c.problem);
              kernels.back().run(ref);
              // fp32 result rounded to out: at most one fp32 and one out rounding from the exact
              // value, which the reference rounds once. Padding stays poisoned in both.
              EXPECT_TRUE(near("out", c.out, want,
                               [&](std::int64_t i) { return error_bounds::elementwise_output(want.get(i), to); }));
            }
  }
}

TEST(ElementwiseKernels, SumRowsEveryEntryMatchesTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto kernels = cpu::sum_rows_kernels();
  const Shape shapes[] = {{0, 3}, {1, 1}, {31, 2}, {32, 64}, {33, 65}, {100, 129}, {1000, 7}};
  for (const auto& k : kernels)
    for (DType tx : kFloatDTypes)
      for (DType to : kFloatDTypes)
        for (Shape s : shapes)
          for (bool accumulate : {false, true}) {
            SCOPED_TRACE(::testing::Message() << k.name << " " << dtypes_name({tx, to}) << " [" << s.rows << ", " << s.n
                                              << "] accumulate " << accumulate);
            const std::int64_t stride = s.n + 2;
            Buffer x = random_buffer(rng, tx, s.rows * stride, 0.5);
            Buffer out = random_buffer(rng, to, s.n);
            if (!accumulate) out.poison();
            Buffer want = out;
            ops::SumRowsProblem p{s.rows, s.n, x.data(), tx, stride, out.data(), to, accumulate};
            ops::SumRowsProblem ref = p;
            ref.out = want.data();
            const Buffer old = out;
            k.run(p);
            kernels.back().run(ref);
            EXPECT_TRUE(near("out", out, want, [&](std::int64_t j) {
              double magnitude = accumulate ? std::fabs(old.get(j)) : 0.0;
              for (std::int64_t r = 0; r < s.rows; ++r) magnitude += std::fabs(x.get(r * stride + j));
              return error_bounds::sum_rows_output(s.rows, magnitude, want.get(j), to);
            }));
          }
}

TEST(ElementwiseKernels, SmallIntegersAreExact) {
  // Sums of small integers are exact in every dtype: kernel and reference agree bit for bit.
  for (DType t : kFloatDTypes) {
    Buffer x(t, 70 * 9);
    for (std::int64_t i = 0; i < x.size(); ++i) x.set(i, static_cast<double>(i % 5) - 2.0);
    Buffer got(t, 9), want(t, 9);
    ops::SumRowsProblem p{70, 9, x.data(), t, 9, got.data(), t, false};
    cpu::sum_rows_cpu(p);
    p.out = want.data();
    cpu::sum_rows_reference(p);
    EXPECT_TRUE(same_bytes(std::string(dtype_name(t)).c_str(), got, want));
  }
}

TEST(ElementwiseKernels, OneAndTwoThreadsGiveIdenticalBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for (DType t : kFloatDTypes) {
    const std::int64_t rows = 1000, n = 200;
    Buffer x = random_buffer(rng, t, rows * n);
    Buffer sums[2] = {Buffer(DType::f32, n), Buffer(DType::f32, n)};
    AddCase c = make_add(rng, {rows, n}, t, t, t, true, false, 0);
    Buffer adds[2] = {c.out, c.out};
    for (int threads : {1, 2}) {
      testing::ThreadsScope scope(threads);
      ops::SumRowsProblem p{rows, n, x.data(), t, n, sums[threads - 1].data(), DType::f32, false};
      cpu::sum_rows_kernels().front().run(p);
      ops::ElementwiseProblem q = c.problem;
      q.out = adds[threads - 1].data();
      cpu::elementwise_kernels().front().run(q);
    }
    EXPECT_TRUE(same_bytes("sum_rows", sums[0], sums[1]));
    EXPECT_TRUE(same_bytes("add", adds[0], adds[1]));
  }
}

}  // namespace
}  // namespace ampkit
