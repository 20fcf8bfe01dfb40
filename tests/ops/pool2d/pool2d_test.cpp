// Tests of 2-D pooling (include/ampkit/ops/pool2d.hpp, src/ops/pool2d/, src/cpu/pool2d/): small
// integers give the hand-computed bits; every entry of the CPU list matches the double reference
// over edge shapes, windows (overlapping, padded, strided), dtypes and 1 and 2 threads (bitwise
// equal between them); the reference's backward matches central finite differences in double;
// bad arguments are refused by name with nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "ampkit/ops/pool2d.hpp"
#include "cpu/pool2d/pool2d_kernels.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;

TensorView view(Buffer& b, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  return TensorView(b.data(), b.dtype, {n, c, h, w});
}

struct Case {
  std::int64_t n, c, h, w;
  Pool2dParams q;
};

std::string describe(const Case& k) {
  return "[" + std::to_string(k.n) + "," + std::to_string(k.c) + "," + std::to_string(k.h) + "," + std::to_string(k.w) +
         "] " + (k.q.kind == PoolKind::max ? "max" : "avg") + " k" + std::to_string(k.q.kernel_h) + "x" +
         std::to_string(k.q.kernel_w) + " s" + std::to_string(k.q.stride_h) + "x" + std::to_string(k.q.stride_w) +
         " p" + std::to_string(k.q.pad_h) + "x" + std::to_string(k.q.pad_w);
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (PoolKind kind : {PoolKind::max, PoolKind::average}) {
    out.push_back({2, 3, 28, 28, {kind, 2, 2, 2, 2, 0, 0}});   // the CNN's pooling
    out.push_back({1, 1, 1, 1, {kind, 1, 1, 1, 1, 0, 0}});     // one element
    out.push_back({3, 2, 7, 5, {kind, 3, 3, 2, 2, 1, 1}});     // overlapping, padded
    out.push_back({1, 4, 9, 13, {kind, 3, 2, 1, 3, 1, 0}});    // stride 1 rows, odd sizes
    out.push_back({2, 1, 5, 4, {kind, 2, 3, 3, 1, 0, 1}});     // stride > kernel: gaps
    out.push_back({1, 33, 17, 11, {kind, 2, 2, 2, 2, 1, 1}});  // many planes (threads)
  }
  return out;
}

double tolerance(DType out, double scale) { return 2.0 * testing::unit_roundoff(out) * scale + 1e-30; }

// Runs every entry of the CPU list on the forward and backward of `k`, against the reference.
void check_entries(const Case& k, DType xt, DType ot, std::mt19937_64& rng) {
  SCOPED_TRACE(describe(k) + " x " + std::string(dtype_name(xt)) + " out " + std::string(dtype_name(ot)));
  const std::int64_t oh = pool2d_output_size(k.h, k.q.kernel_h, k.q.stride_h, k.q.pad_h);
  const std::int64_t ow = pool2d_output_size(k.w, k.q.kernel_w, k.q.stride_w, k.q.pad_w);
  ASSERT_GT(oh * ow, 0);
  Buffer x(xt, k.n * k.c * k.h * k.w), dy(xt, k.n * k.c * oh * ow);
  x.fill_normal(rng, 0.5, 2.0);
  dy.fill_normal(rng, 0.0, 1.0);
  for (bool backward : {false, true}) {
    const std::int64_t outs = backward ? x.size() : dy.size();
    Buffer ref(ot, outs);
    ref.poison();
    const TensorView xv = view(x, k.n, k.c, k.h, k.w);
    const TensorView dyv = view(dy, k.n, k.c, oh, ow);
    const TensorView rv = backward ? view(ref, k.n, k.c, k.h, k.w) : view(ref, k.n, k.c, oh, ow);
    ops::PreparedPool2d call =
        backward ? ops::prepare_pool2d_backward(xv, dyv, rv, k.q) : ops::prepare_pool2d_forward(xv, rv, k.q);
    cpu::pool2d_reference(call.problem());
    // The scale of the sums: the largest |x| (forward) or |dy| times the windows an element is in.
    double scale = 0;
    for (std::int64_t i = 0; i < (backward ? dy.size() : x.size()); ++i)
      scale = std::max(scale, std::fabs(backward ? dy.get(i) : x.get(i)));
    scale *= backward ? (k.q.kernel_h / k.q.stride_h + 1) * (k.q.kernel_w / k.q.stride_w + 1) : 1;
    for (const ops::Pool2dEntry& e : cpu::pool2d_kernels()) {
      SCOPED_TRACE(std::string(e.name) + (backward ? " backward" : " forward"));
      std::vector<Buffer> by_threads;
      for (int threads : {1, 2}) {
        testing::ThreadsScope scope(threads);
        Buffer got(ot, outs);
        got.poison();
        ops::Pool2dProblem p = call.problem();
        p.out = got.data();
        e.run(p);
        for (std::int64_t i = 0; i < outs; ++i) {
          ASSERT_FALSE(std::isnan(got.get(i))) << "element " << i << " not written";
          // The max forward picks an element: exact. Sums: within the dtypes' rounding.
          if (k.q.kind == PoolKind::max && !backward)
            ASSERT_EQ(got.get(i), ref.get(i)) << i;
          else
            ASSERT_NEAR(got.get(i), ref.get(i), tolerance(ot, scale) + 1e-6 * scale) << i;
        }
        by_threads.push_back(std::move(got));
      }
      EXPECT_EQ(by_threads[0].bytes, by_threads[1].bytes) << "the bits depend on the thread count";
    }
  }
}

TEST(Pool2d, EveryEntryMatchesTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (const Case& k : cases()) {
    check_entries(k, DType::f32, DType::f32, rng);
    check_entries(k, DType::bf16, DType::bf16, rng);
    check_entries(k, DType::f16, DType::f32, rng);
  }
}

TEST(Pool2d, SmallIntegersGiveTheHandComputedBits) {
  // x: one 4x4 plane, 0..15; 2x2 windows, stride 2.
  std::vector<float> x(16), y(4), dy = {1, 2, 3, 4}, dx(16, -7.0f);
  for (int i = 0; i < 16; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>((i * 5) % 16);
  const TensorView xv(x.data(), DType::f32, {1, 1, 4, 4}), yv(y.data(), DType::f32, {1, 1, 2, 2});
  const TensorView dyv(dy.data(), DType::f32, {1, 1, 2, 2}), dxv(dx.data(), DType::f32, {1, 1, 4, 4});
  // x = 0 5 10 15 / 4 9 14 3 / 8 13 2 7 / 12 1 6 11
  pool2d_forward(xv, yv, {PoolKind::max, 2, 2, 2, 2, 0, 0});
  EXPECT_EQ(y, (std::vector<float>{9, 15, 13, 11}));
  pool2d_backward(xv, dyv, dxv, {PoolKind::max, 2, 2, 2, 2, 0, 0});
  EXPECT_EQ(dx, (std::vector<float>{0, 0, 0, 2, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 4}));
  pool2d_forward(xv, yv, {PoolKind::average, 2, 2, 2, 2, 0, 0});
  EXPECT_EQ(y, (std::vector<float>{4.5f, 10.5f, 8.5f, 6.5f}));
  pool2d_backward(xv, dyv, dxv, {PoolKind::average, 2, 2, 2, 2, 0, 0});
  EXPECT_EQ(dx, (std::vector<float>{0.25f, 0.25f, 0.5f, 0.5f, 0.25f, 0.25f, 0.5f, 0.5f, 0.75f, 0.75f, 1, 1, 0.75f,
                                    0.75f, 1, 1}));
  // Padded average: the corner window of a 3x3 kernel with pad 1 holds 4 elements, not 9.
  std::vector<float> y1(16);
  pool2d_forward(xv, TensorView(y1.data(), DType::f32, {1, 1, 4, 4}), {PoolKind::average, 3, 3, 1, 1, 1, 1});
  EXPECT_EQ(y1[0], (0.0f + 5 + 4 + 9) / 4);
  // Ties go to the window's first element, as the forward chose it; a NaN wins.
  std::vector<float> t = {1, 1, 1, 1}, tg(4), one = {1}, ty(1);
  const TensorView tv(t.data(), DType::f32, {1, 1, 2, 2}), tgv(tg.data(), DType::f32, {1, 1, 2, 2});
  pool2d_backward(tv, TensorView(one.data(), DType::f32, {1, 1, 1, 1}), tgv, {});
  EXPECT_EQ(tg, (std::vector<float>{1, 0, 0, 0}));
  t[2] = std::nanf("");
  pool2d_forward(tv, TensorView(ty.data(), DType::f32, {1, 1, 1, 1}), {});
  EXPECT_TRUE(std::isnan(ty[0]));
}

TEST(Pool2d, ReferenceBackwardMatchesFiniteDifferences) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (PoolKind kind : {PoolKind::max, PoolKind::average}) {
    const Pool2dParams q{kind, 3, 2, 2, 1, 1, 1};
    const std::int64_t n = 2, c = 2, h = 6, w = 5;
    const std::int64_t oh = pool2d_output_size(h, 3, 2, 1), ow = pool2d_output_size(w, 2, 1, 1);
    // Distinct values (a permutation, spaced by 1) so a small step never changes the max's choice.
    std::vector<double> xs(static_cast<std::size_t>(n * c * h * w));
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i);
    std::shuffle(xs.begin(), xs.end(), rng);
    Buffer x(DType::f32, n * c * h * w), dy(DType::f32, n * c * oh * ow), dx(DType::f32, x.size()),
        y(DType::f32, dy.size());
    for (std::int64_t i = 0; i < x.size(); ++i) x.set(i, xs[static_cast<std::size_t>(i)] * 0.25);
    dy.fill_normal(rng, 0.0, 1.0);
    set_reference_kernels(true);
    pool2d_backward(view(x, n, c, h, w), view(dy, n, c, oh, ow), view(dx, n, c, h, w), q);
    auto loss = [&] {  // sum(dy * pool(x))
      pool2d_forward(view(x, n, c, h, w), view(y, n, c, oh, ow), q);
      double s = 0;
      for (std::int64_t i = 0; i < y.size(); ++i) s += dy.get(i) * y.get(i);
      return s;
    };
    for (std::int64_t i = 0; i < x.size(); ++i) {
      const double x0 = x.get(i), step = 1.0 / 16;  // exact in f32, below half the values' spacing
      x.set(i, x0 + step);
      const double up = loss();
      x.set(i, x0 - step);
      const double down = loss();
      x.set(i, x0);
      EXPECT_NEAR(dx.get(i), (up - down) / (2 * step), 1e-4) << (kind == PoolKind::max ? "max " : "avg ") << i;
    }
    set_reference_kernels(false);
  }
}

TEST(Pool2d, BadArgumentsAreRefusedByNameWithNothingWritten) {
  std::vector<float> x(2 * 3 * 8 * 8, 1.0f), y(2 * 3 * 4 * 4, -5.0f), dx(x.size(), -5.0f);
  const TensorView xv(x.data(), DType::f32, {2, 3, 8, 8}), yv(y.data(), DType::f32, {2, 3, 4, 4});
  const Pool2dParams q;
  EXPECT_EQ(pool2d_forward_check(xv, yv, q), "");
  EXPECT_STREQ(pool2d_forward_kernel_name(xv, yv, q), "pool2d_cpu");
  EXPECT_EQ(pool2d_forward_check(TensorView(x.data(), DType::f32, {6, 8, 8}), yv, q),
            "pool2d_forward: x must have rank 4 ([N, C, H, W]), but got [6, 8, 8] f32");
  EXPECT_EQ(pool2d_forward_check(xv, TensorView(y.data(), DType::f32, {2, 3, 4, 3}), q),
            "pool2d_forward: y must have [N, C, OH, OW] of x's N, C and the window's output size [2, 3, 4, 4], "
            "but got [2, 3, 4, 3]");
  EXPECT_EQ(pool2d_forward_check(xv, yv, {PoolKind::max, 2, 2, 0, 2, 0, 0}),
            "pool2d_forward: params.stride_h must be at least 1, but got 0");
  EXPECT_EQ(pool2d_forward_check(xv, yv, {PoolKind::max, 2, 3, 2, 2, 0, 2}),
            "pool2d_forward: params.pad_w must be in [0, kernel_w / 2 = 1], but got 2");
  EXPECT_EQ(pool2d_forward_check(xv, yv, {static_cast<PoolKind>(7), 2, 2, 2, 2, 0, 0}),
            "pool2d_forward: params.kind must be PoolKind::max or PoolKind::average, but got the value 7");
  EXPECT_EQ(pool2d_forward_check(xv, TensorView(x.data(), DType::f32, {2, 3, 4, 4}), q).rfind("pool2d_forward: y ", 0),
            0u);  // y overlaps x
  EXPECT_NE(pool2d_forward_check(TensorView(nullptr, DType::f32, {2, 3, 8, 8}), yv, q), "");
  EXPECT_EQ(pool2d_forward_descriptor_check(TensorView(nullptr, DType::f32, {2, 3, 8, 8}),
                                            TensorView(nullptr, DType::f32, {2, 3, 4, 4}), q),
            "");
  EXPECT_EQ(pool2d_backward_check(xv, yv, TensorView(dx.data(), DType::f32, {2, 3, 8, 7}), q),
            "pool2d_backward: dx shape must equal x's shape [2, 3, 8, 8], but got [2, 3, 8, 7]");
  EXPECT_THROW(pool2d_forward(xv, TensorView(y.data(), DType::f32, {2, 3, 4, 3}), q), Error);
  EXPECT_THROW(pool2d_backward(xv, yv, TensorView(dx.data(), DType::f32, {2, 3, 8, 7}), q), Error);
  for (float v : y) ASSERT_EQ(v, -5.0f);
  for (float v : dx) ASSERT_EQ(v, -5.0f);
  set_reference_kernels(true);
  EXPECT_STREQ(pool2d_backward_kernel_name(xv, yv, TensorView(dx.data(), DType::f32, {2, 3, 8, 8}), q),
               "pool2d_reference");
  set_reference_kernels(false);
}

}  // namespace
}  // namespace ampkit
