// Linear operands with leading dims (layers layer tests): x [batch, seq, in] (the graph's
// layout) gives the same bits as the flat [batch * seq, in] call, forward and backward; in and
// out come from the views; a backward call with nothing requested does nothing.
#include <gtest/gtest.h>

#include <random>

#include "ampkit/layers/linear.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;

TEST(LinearShapes, BatchAndSequenceDimsGiveTheFlatResult) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::int64_t batch = 3, seq = 5, in = 20, out = 9, rows = batch * seq;
  Buffer x(DType::bf16, rows * in), w(DType::bf16, out * in), bias(DType::f32, out), dy(DType::bf16, rows * out),
      below_aux(DType::f32, rows * in);
  for (Buffer* b : {&x, &w, &bias, &dy, &below_aux}) b->fill_normal(rng, 0.0, 1.0);
  struct Out {
    Buffer y, aux, dx, dw, db, below_db;
  };
  Out flat, shaped;
  for (Out* o : {&flat, &shaped}) {
    o->y = Buffer(DType::bf16, rows * out);
    o->aux = Buffer(DType::f32, rows * out);
    o->dx = Buffer(DType::f32, rows * in);
    o->dw = Buffer(DType::f32, out * in);
    o->db = Buffer(DType::f32, out);
    o->below_db = Buffer(DType::f32, in);
  }
  auto run = [&](Out& o, bool with_seq) {
    auto rows_view = [&](Buffer& b, std::int64_t features) {
      return with_seq ? TensorView(b.data(), b.dtype, {batch, seq, features})
                      : TensorView(b.data(), b.dtype, {rows, features});
    };
    LinearForwardArgs f;
    f.x = rows_view(x, in);
    f.w = TensorView(w.data(), DType::bf16, {out, in});
    f.bias = TensorView(bias.data(), DType::f32, {out});
    f.y = rows_view(o.y, out);
    f.gelu = true;
    f.aux = rows_view(o.aux, out);
    linear_forward(f);
    LinearBackwardArgs g;
    g.dy = rows_view(dy, out);
    g.x = f.x;
    g.w = f.w;
    g.dx = rows_view(o.dx, in);
    g.dw = TensorView(o.dw.data(), DType::f32, {out, in});
    g.db = TensorView(o.db.data(), DType::f32, {out});
    g.below_gelu = true;
    g.below_aux = rows_view(below_aux, in);
    g.below_db = TensorView(o.below_db.data(), DType::f32, {in});
    linear_backward(g);
  };
  run(flat, false);
  run(shaped, true);
  EXPECT_EQ(shaped.y.bytes, flat.y.bytes);
  EXPECT_EQ(shaped.aux.bytes, flat.aux.bytes);
  EXPECT_EQ(shaped.dx.bytes, flat.dx.bytes);
  EXPECT_EQ(shaped.dw.bytes, flat.dw.bytes);
  EXPECT_EQ(shaped.db.bytes, flat.db.bytes);
  EXPECT_EQ(shaped.below_db.bytes, flat.below_db.bytes);
}

// A rank-1 x is one row: y [out] = w x + b.
TEST(LinearShapes, VectorInputIsOneRow) {
  Buffer x(DType::f32, 3), w(DType::f32, 6), y(DType::f32, 2);
  for (std::int64_t i = 0; i < 3; ++i) x.set(i, static_cast<double>(i + 1));
  for (std::int64_t i = 0; i < 6; ++i) w.set(i, static_cast<double>(i));
  LinearForwardArgs f;
  f.x = TensorView(x.data(), DType::f32, {3});
  f.w = TensorView(w.data(), DType::f32, {2, 3});
  f.y = TensorView(y.data(), DType::f32, {2});
  linear_forward(f);
  EXPECT_EQ(y.get(0), 0 * 1 + 1 * 2 + 2 * 3);
  EXPECT_EQ(y.get(1), 3 * 1 + 4 * 2 + 5 * 3);
}

// Nothing requested: nothing read or written, even without dy.
TEST(LinearShapes, BackwardWithoutOutputsDoesNothing) {
  LinearBackwardArgs g;
  EXPECT_EQ(linear_check(g), "");
  EXPECT_NO_THROW(linear_backward(g));
  Buffer x(DType::f32, 6);
  g.x = TensorView(x.data(), DType::f32, {2, 3});
  EXPECT_NO_THROW(linear_backward(g));
}

}  // namespace
}  // namespace ampkit
