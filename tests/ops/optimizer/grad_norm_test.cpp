// The global gradient norm and all_finite (kernels and ops layers): the norm against the
// reference and against the documented block order bit for bit, 1, 2 and 3 threads bitwise,
// NaN/Inf propagation; all_finite on NaN/Inf in every dtype and position.
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

namespace ampkit {
namespace {

using namespace ops_testing;

// The documented order, written out: blocks of 4096, 8 lanes per block added in lane order, the
// block sums added in order, view after view.
double documented_norm(const std::vector<Buffer>& grads) {
  double total = 0.0;
  for (const Buffer& b : grads)
    for (std::int64_t i0 = 0; i0 < b.size(); i0 += cpu::kGradNormBlock) {
      const std::int64_t i1 = std::min(b.size(), i0 + cpu::kGradNormBlock);
      double lanes[cpu::kGradNormLanes] = {};
      for (std::int64_t i = i0; i < i1; ++i) lanes[(i - i0) % cpu::kGradNormLanes] += b.get(i) * b.get(i);
      double block = 0.0;
      for (double lane : lanes) block += lane;
      total += block;
    }
  return std::sqrt(total);
}

std::vector<TensorView> views_of(std::vector<Buffer>& buffers) {
  std::vector<TensorView> views;
  for (Buffer& b : buffers) views.push_back(view_of(b, {b.size()}));
  return views;
}

TEST(GlobalGradNorm, MatchesTheReferenceAndTheDocumentedOrder) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::vector<std::vector<std::pair<DType, std::int64_t>>> lists = {
      {},
      {{DType::f32, 0}},
      {{DType::f32, 1}},
      {{DType::bf16, 4095}, {DType::f16, 4096}, {DType::f32, 4097}},
      {{DType::f32, 1100000}, {DType::f16, 7}, {DType::bf16, 0}, {DType::bf16, 30000}},
  };
  const auto kernels = cpu::global_grad_norm_kernels();
  for (const auto& list : lists) {
    std::vector<Buffer> buffers;
    std::int64_t total = 0;
    for (auto [t, n] : list) {
      buffers.push_back(random_buffer(rng, t, n, 0.0, 1e-3));
      total += n;
    }
    SCOPED_TRACE(::testing::Message() << list.size() << " views, " << total << " elements");
    const std::vector<TensorView> views = views_of(buffers);
    const ops::ViewsProblem p{views};
    const double want = kernels.back().run(p);
    for (const auto& k : kernels) {
      const double got = k.run(p);
      // Two fp64 sums of the same (exact) squares in different orders.
      EXPECT_NEAR(got, want, error_bounds::global_grad_norm(total, want)) << k.name;
    }
    EXPECT_EQ(kernels.front().run(p), documented_norm(buffers));
    EXPECT_EQ(global_grad_norm(views), documented_norm(buffers));
  }
  // Small integers: exact in every order.
  Buffer a(DType::bf16, 3), b(DType::f16, 1);
  a.set(0, 3), a.set(1, -4), a.set(2, 12), b.set(0, 84);
  const TensorView ab[] = {view_of(a, {3}), view_of(b, {1, 1})};
  EXPECT_EQ(global_grad_norm(ab), 85.0);
  EXPECT_EQ(global_grad_norm({}), 0.0);
}

TEST(GlobalGradNorm, TheDocumentedOrderIsTheOneUsed) {
  // 2^27 squared is 2^54, whose ulp is 4: a 1.25^2 = 1.5625 added to it alone is lost, while
  // four or more added together first are not (2^54 + 8 or more: a norm of at least
  // 2^27 + 2^-25). The 2^27 comes first in its lane (element 0), its block (lane 0) and the list
  // (block 0 of view 0); every lane, block and view partial after it is below 2, so the
  // documented order (and the plain sequential sum) loses every 1.25, and adding the lanes, the
  // blocks or the views in another order keeps some.
  const std::int64_t block = cpu::kGradNormBlock;
  Buffer a(DType::f32, 5 * block), b(DType::bf16, block + 1), c(DType::f16, block + 1);
  for (Buffer* x : {&a, &b, &c})
    for (std::int64_t i = 0; i < x->size(); ++i) x->set(i, 0.0);
  a.set(0, 0x1p27);
  for (std::int64_t i : {1, 2, 3, 4, 5, 6, 7, 8, 16}) a.set(i, 1.25);  // lanes of block 0
  for (std::int64_t i : {block + 1, 2 * block + 8, 3 * block + 9, 5 * block - 1}) a.set(i, -1.25);
  for (std::int64_t i : {std::int64_t{0}, block}) b.set(i, 1.25), c.set(i + (i ? 0 : 5), -1.25);
  const TensorView views[] = {view_of(a, {5, block}), view_of(b, {block + 1}), view_of(c, {block + 1})};
  for (int threads : {1, 2}) {
    testing::ThreadsScope scope(threads);
    EXPECT_EQ(global_grad_norm(views), 0x1p27) << threads << " threads";
  }
  EXPECT_EQ(cpu::global_grad_norm_reference(ops::ViewsProblem{views}), 0x1p27);
}

TEST(GlobalGradNorm, GivesIdenticalBitsOnOneTwoAndThreeThreads) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  std::vector<Buffer> buffers;
  buffers.push_back(random_buffer(rng, DType::f32, 1500000, 0.0, 10.0));
  buffers.push_back(random_buffer(rng, DType::bf16, 70001));
  buffers.push_back(random_buffer(rng, DType::f16, 5));
  const std::vector<TensorView> views = views_of(buffers);
  double norms[3];
  for (int t = 0; t < 3; ++t) {
    testing::ThreadsScope scope(t + 1);
    norms[t] = global_grad_norm(views);
  }
  EXPECT_EQ(std::memcmp(&norms[0], &norms[1], sizeof(double)), 0) << norms[0] << " vs " << norms[1];
  EXPECT_EQ(std::memcmp(&norms[0], &norms[2], sizeof(double)), 0) << norms[0] << " vs " << norms[2];
}

TEST(GlobalGradNorm, NanAndInfPropagate) {
  for (DType t : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(t));
    Buffer a(t, 9000), b(DType::f32, 10);
    for (std::int64_t i = 0; i < 9000; ++i) a.set(i, 0.5);
    const TensorView views[] = {view_of(b, {10}), view_of(a, {9000})};
    EXPECT_EQ(global_grad_norm(views), std::sqrt(9000 * 0.25));
    a.set(8191, -INFINITY);
    EXPECT_EQ(global_grad_norm(views), INFINITY);
    a.set(5, NAN);
    EXPECT_TRUE(std::isnan(global_grad_norm(views)));
    a.set(8191, 0.5);
    EXPECT_TRUE(std::isnan(global_grad_norm(views)));
  }
}

TEST(AllFinite, FindsEveryNanAndInfInEveryDtypeAndPosition) {
  const std::int64_t n = 100000;
  const double bad_values[] = {NAN, INFINITY, -INFINITY};
  for (DType t : kFloatDTypes) {
    Buffer x(t, n), y(DType::f32, 3);
    // The largest finite values and the subnormals are finite.
    const double largest = t == DType::f16 ? 65504.0 : t == DType::bf16 ? 0x1.fep127 : 0x1.fffffep127;
    for (std::int64_t i = 0; i < n; ++i) x.set(i, (i % 3 == 0 ? -1.0 : 1.0) * (i % 2 ? largest : 0x1p-24));
    const TensorView views[] = {view_of(y, {3}), view_of(x, {n / 100, 100})};
    const ops::ViewsProblem p{views};
    for (const auto& k : cpu::all_finite_kernels()) EXPECT_TRUE(k.run(p)) << k.name << " " << dtype_name(t);
    EXPECT_TRUE(all_finite(views));
    for (std::int64_t pos : {std::int64_t{0}, std::int64_t{4095}, std::int64_t{4096}, std::int64_t{50001}, n - 1})
      for (double bad : bad_values) {
        SCOPED_TRACE(::testing::Message() << dtype_name(t) << " " << bad << " at " << pos);
        const double saved = x.get(pos);
        x.set(pos, bad);
        for (const auto& k : cpu::all_finite_kernels()) EXPECT_FALSE(k.run(p)) << k.name;
        EXPECT_FALSE(all_finite(views));
        {
          testing::ThreadsScope scope(2);
          EXPECT_FALSE(all_finite(views));
        }
        x.set(pos, saved);
      }
    y.set(2, NAN);
    EXPECT_FALSE(all_finite(views));
  }
  EXPECT_TRUE(all_finite({}));
}

}  // namespace
}  // namespace ampkit
