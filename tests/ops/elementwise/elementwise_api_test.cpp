// Tests of the elementwise front end (ops layer): each public call computes what its
// documentation says (checked against values computed here in double), in place and on strided
// or rank-3 views; bad arguments give messages naming the function, argument and values, and
// nothing is written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ampkit/ops/elementwise.hpp"
#include "ops/elementwise/op_test_support.hpp"

namespace ampkit {
namespace {

using namespace ops_testing;

// Tolerance of one fp32 op plus one rounding to t, relative to |v|.
double tol(DType t, double v) { return 2.0 * (unit_roundoff(t) + kU32) * std::fabs(v) + 1e-7; }

TEST(ElementwiseApi, AddAccumulateRowVectorScaleAndSumRows) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for (DType t : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(t));
    Buffer a = random_buffer(rng, t, 2 * 3 * 5), b = random_buffer(rng, DType::f32, 30);
    Buffer bias = random_buffer(rng, DType::bf16, 5), out(DType::f32, 30);
    add(view_of(a, {2, 3, 5}), view_of(b, {2, 3, 5}), view_of(out, {2, 3, 5}));
    for (std::int64_t i = 0; i < 30; ++i)
      EXPECT_NEAR(out.get(i), a.get(i) + b.get(i), tol(DType::f32, a.get(i) + b.get(i)));

    Buffer acc = b;
    add_accumulate(view_of(a, {6, 5}), view_of(acc, {6, 5}));
    for (std::int64_t i = 0; i < 30; ++i) EXPECT_EQ(acc.get(i), out.get(i));

    Buffer x = a;  // in place: out is x
    add_row_vector(view_of(x, {2, 3, 5}), view_of(bias, {5}), view_of(x, {2, 3, 5}));
    for (std::int64_t i = 0; i < 30; ++i)
      EXPECT_NEAR(x.get(i), a.get(i) + bias.get(i % 5), tol(t, a.get(i) + bias.get(i % 5)));

    Buffer s = a;
    scale(view_of(s, {30}), -0.5f, view_of(s, {30}));
    for (std::int64_t i = 0; i < 30; ++i) EXPECT_EQ(s.get(i), -0.5 * a.get(i));

    Buffer sums(t, 5);
    sums.poison();
    sum_rows(view_of(a, {2, 3, 5}), view_of(sums, {5}), false);
    Buffer again = sums;
    sum_rows(view_of(a, {6, 5}), view_of(again, {5}), true);
    for (std::int64_t j = 0; j < 5; ++j) {
      double want = 0.0, magnitude = 0.0;
      for (std::int64_t r = 0; r < 6; ++r) want += a.get(r * 5 + j), magnitude += std::fabs(a.get(r * 5 + j));
      EXPECT_NEAR(sums.get(j), want, tol(t, magnitude) * 8.0);
      EXPECT_NEAR(again.get(j), 2.0 * sums.get(j), tol(t, 2.0 * magnitude) * 8.0);
    }
  }
}

TEST(ElementwiseApi, ColumnSliceViewsAndEmptyShapes) {
  // out and x are column slices [4, 3] of [4, 8] buffers (row stride 8).
  Buffer a(DType::f32, 32), out(DType::f32, 32);
  for (std::int64_t i = 0; i < 32; ++i) a.set(i, static_cast<double>(i));
  out.poison();
  TensorView va(static_cast<float*>(a.data()) + 2, DType::f32, {4, 3});
  va.strides = {8, 1};
  TensorView vo(static_cast<float*>(out.data()) + 5, DType::f32, {4, 3});
  vo.strides = {8, 1};
  scale(va, 2.0f, vo);
  for (std::int64_t r = 0; r < 4; ++r)
    for (std::int64_t j = 0; j < 8; ++j) {
      if (j >= 5)
        EXPECT_EQ(out.get(r * 8 + j), 2.0 * static_cast<double>(r * 8 + j - 3));
      else
        EXPECT_TRUE(std::isnan(out.get(r * 8 + j)));
    }
  Buffer none(DType::f32, 0), sums(DType::f32, 3);
  sums.poison();
  add(view_of(none, {0, 3}), view_of(none, {0, 3}), view_of(none, {0, 3}));
  sum_rows(view_of(none, {0, 3}), view_of(sums, {3}), false);
  for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(sums.get(j), 0.0);
}

TEST(ElementwiseApi, BadArgumentsAreRejectedAndNothingIsWritten) {
  Buffer a(DType::f32, 12), b(DType::bf16, 12), out(DType::f16, 12), ids(DType::i32, 12);
  for (std::int64_t i = 0; i < 12; ++i) a.set(i, 1.0), b.set(i, 2.0);
  out.poison();
  const Buffer untouched = out;
  TensorView va = view_of(a, {3, 4}), vb = view_of(b, {3, 4}), vo = view_of(out, {3, 4});
  EXPECT_TRUE(throws_with(
      [&] {
        add(va, view_of(b, {4, 3}), vo);
      },
      {"add: b shape must equal a's shape [3, 4], but got [4, 3]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        add(va, TensorView(ids.data(), DType::i32, {3, 4}), vo);
      },
      {"add: b dtype must be f32, bf16 or f16, but got i32"}));
  EXPECT_TRUE(throws_with([&] { add(va, TensorView(), vo); }, {"add: b must be present"}));
  TensorView on_gpu = vb;
  on_gpu.device = Device::cuda;
  // Without a GPU: unsupported, saying why; with one: a cuda b among cpu operands. Either way named.
  EXPECT_TRUE(throws_with([&] { add(va, on_gpu, vo); }, {"add: b is in cuda:0 memory, but "}));
  TensorView transposed = vb;
  transposed.shape = {4, 3};
  transposed.strides = {1, 4};
  EXPECT_TRUE(throws_with(
      [&] {
        add(view_of(a, {4, 3}), transposed, view_of(out, {4, 3}));
      },
      {"add: b last dim must be contiguous", "strides [1, 4]"}));
  TensorView shifted(static_cast<char*>(out.data()) + 2, DType::f16, {3, 4});
  EXPECT_TRUE(
      throws_with([&] { add(va, shifted, vo); }, {"add: out", "must be exactly b (in place) or not overlap it"}));
  EXPECT_TRUE(throws_with([&] { scale(va, std::nanf(""), vo); }, {"scale: alpha must be finite, but got nan"}));
  EXPECT_TRUE(throws_with([&] { add_row_vector(va, view_of(b, {3}), vo); },
                          {"add_row_vector: bias length must equal x's last dim (4), but got [3]"}));
  EXPECT_TRUE(throws_with([&] { sum_rows(va, view_of(out, {3}), false); },
                          {"sum_rows: out length must equal x's last dim (4), but got [3]"}));
  EXPECT_TRUE(throws_with([&] { sum_rows(va, view_of(a, {4}), false); }, {"sum_rows: out", "must not overlap x"}));
  EXPECT_TRUE(throws_with([&] { add_accumulate(va, view_of(out, {12})); },
                          {"add_accumulate: acc shape must equal x's shape [3, 4], but got [12]"}));
  EXPECT_EQ(out.bytes, untouched.bytes);
}

}  // namespace
}  // namespace ampkit
