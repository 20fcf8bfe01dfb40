// Norm operands of any rank (ops layer tests): x [..., n] with the leading dims as rows and
// normalized_rank trailing dims as n gives the same bits as the flat [rows, n] call; mean/rstd
// may be [rows] or x's leading dims; gamma has x's normalized dims.
#include <gtest/gtest.h>

#include <random>

#include "ampkit/ops/norm.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;

TEST(NormShapes, LeadingAndNormalizedDimsGiveTheFlatResult) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::int64_t a = 2, b = 3, c = 4, d = 5;  // x [a, b, c, d]
  const std::int64_t size = a * b * c * d;
  for (int normalized_rank : {1, 2, 3}) {
    SCOPED_TRACE(::testing::Message() << "normalized_rank " << normalized_rank);
    const std::int64_t n = normalized_rank == 1 ? d : normalized_rank == 2 ? c * d : b * c * d;
    const std::int64_t rows = size / n;
    Buffer x(DType::bf16, size), dy(DType::bf16, size), gamma(DType::f32, n), beta(DType::f32, n);
    x.fill_normal(rng, 0.5, 1.0);
    dy.fill_normal(rng, 0.0, 1.0);
    gamma.fill_normal(rng, 1.0, 0.5);
    beta.fill_normal(rng, 0.0, 0.5);
    struct Out {
      Buffer y{DType::bf16, 0}, mean, rstd, dx, dgamma, dbeta;
    };
    Out flat, shaped;
    for (Out* o : {&flat, &shaped}) {
      o->y = Buffer(DType::bf16, size);
      o->dx = Buffer(DType::bf16, size);
      o->mean = Buffer(DType::f32, rows);
      o->rstd = Buffer(DType::f32, rows);
      o->dgamma = Buffer(DType::f32, n);
      o->dbeta = Buffer(DType::f32, n);
    }
    const std::int64_t dims[4] = {a, b, c, d};
    const int lead = 4 - normalized_rank;
    auto run = [&](Out& o, bool shaped_views) {
      NormForwardArgs f;
      NormBackwardArgs g;
      if (shaped_views) {
        f.x = TensorView(x.data(), DType::bf16, dims, 4);
        f.y = TensorView(o.y.data(), DType::bf16, dims, 4);
        f.gamma = TensorView(gamma.data(), DType::f32, dims + lead, normalized_rank);
        f.beta = TensorView(beta.data(), DType::f32, dims + lead, normalized_rank);
        f.mean = TensorView(o.mean.data(), DType::f32, dims, lead);  // x's leading dims
        f.rstd = TensorView(o.rstd.data(), DType::f32, {rows});
        f.normalized_rank = normalized_rank;
        g.dy = TensorView(dy.data(), DType::bf16, dims, 4);
        g.dx = TensorView(o.dx.data(), DType::bf16, dims, 4);
        g.dgamma = TensorView(o.dgamma.data(), DType::f32, dims + lead, normalized_rank);
        g.dbeta = TensorView(o.dbeta.data(), DType::f32, dims + lead, normalized_rank);
        g.normalized_rank = normalized_rank;
      } else {
        f.x = TensorView(x.data(), DType::bf16, {rows, n});
        f.y = TensorView(o.y.data(), DType::bf16, {rows, n});
        f.gamma = TensorView(gamma.data(), DType::f32, {n});
        f.beta = TensorView(beta.data(), DType::f32, {n});
        f.mean = TensorView(o.mean.data(), DType::f32, {rows});
        f.rstd = TensorView(o.rstd.data(), DType::f32, {rows});
        g.dy = TensorView(dy.data(), DType::bf16, {rows, n});
        g.dx = TensorView(o.dx.data(), DType::bf16, {rows, n});
        g.dgamma = TensorView(o.dgamma.data(), DType::f32, {n});
        g.dbeta = TensorView(o.dbeta.data(), DType::f32, {n});
      }
      layer_norm_forward(f);
      g.x = f.x;
      g.mean = f.mean;
      g.rstd = f.rstd;
      g.gamma = f.gamma;
      layer_norm_backward(g);
    };
    run(flat, false);
    run(shaped, true);
    EXPECT_EQ(shaped.y.bytes, flat.y.bytes);
    EXPECT_EQ(shaped.mean.bytes, flat.mean.bytes);
    EXPECT_EQ(shaped.rstd.bytes, flat.rstd.bytes);
    EXPECT_EQ(shaped.dx.bytes, flat.dx.bytes);
    EXPECT_EQ(shaped.dgamma.bytes, flat.dgamma.bytes);
    EXPECT_EQ(shaped.dbeta.bytes, flat.dbeta.bytes);
  }
}

// normalized_rank = x's rank: one row (the leading dims are empty, mean/rstd have shape [1]).
TEST(NormShapes, WholeTensorIsOneRow) {
  Buffer x(DType::f32, 12), y(DType::f32, 12), rstd(DType::f32, 1);
  for (std::int64_t i = 0; i < 12; ++i) x.set(i, static_cast<double>(i % 5));
  NormForwardArgs f;
  f.x = TensorView(x.data(), DType::f32, {3, 4});
  f.y = TensorView(y.data(), DType::f32, {3, 4});
  f.rstd = TensorView(rstd.data(), DType::f32, {1});
  f.normalized_rank = 2;
  rms_norm_forward(f);
  double sum_sq = 0.0;
  for (std::int64_t i = 0; i < 12; ++i) sum_sq += x.get(i) * x.get(i);
  EXPECT_NEAR(rstd.get(0), 1.0 / std::sqrt(sum_sq / 12.0 + 1e-5), 1e-6);
  EXPECT_NEAR(y.get(7), x.get(7) * rstd.get(0), 1e-6);
}

}  // namespace
}  // namespace ampkit
