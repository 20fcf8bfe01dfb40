// Tests of the Linear layer (kernels layer): the forward and backward GEMM mappings against the
// direct row-major double reference of linear_reference.hpp, over every dtype of every operand,
// with and without bias, GELU (tanh, erf) with and without aux, dx / dw / db with accumulation,
// the fused DGELU_BGRAD of an MLP, zero-sized dims, fp16 modes, on every ISA; plus bit-exact
// small-integer cases, 1-vs-2-thread bitwise equality and finite-difference checks of the
// reference itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/layers/linear.hpp"
#include "layers/linear_reference.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;
using testing::RefSum;

constexpr DType kDtypes[] = {DType::f32, DType::bf16, DType::f16};

struct Shape {
  std::int64_t batch, in, out;
};

std::vector<Fp16Mode> modes_for(std::initializer_list<DType> operands) {
  for (DType t : operands)
    if (t == DType::f16) return {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt};
  return {Fp16Mode::exact};
}

const char* mode_name(Fp16Mode m) { return m == Fp16Mode::exact ? "exact" : m == Fp16Mode::flush ? "flush" : "alt"; }

// Counts mismatches; reports the first few (a poisoned NaN never passes).
class Checker {
 public:
  void near(const char* what, std::int64_t index, double got, double expected, double bound) {
    if (std::fabs(got - expected) <= bound) return;
    if (failures_++ < 4)
      ADD_FAILURE() << what << "[" << index << "] = " << got << ", expected " << expected << " +- " << bound
                    << " (off by " << std::fabs(got - expected) << ")";
  }
  int failures() const { return failures_; }

 private:
  int failures_ = 0;
};

// ---------------------------------------------------------------------------- forward

struct ForwardCase {
  Shape s;
  DType x, w, y;
  Fp16Mode mode = Fp16Mode::exact;
  bool gelu = false;
  GeluVariant variant = GeluVariant::tanh;
  bool bias = false;
  DType bias_dtype = DType::f32;
  bool aux = false;
  DType aux_dtype = DType::f32;

  std::string describe() const {
    std::ostringstream o;
    o << "batch " << s.batch << " in " << s.in << " out " << s.out << " x " << dtype_name(x) << " w " << dtype_name(w)
      << " y " << dtype_name(y) << " fp16 " << mode_name(mode)
      << (gelu ? (variant == GeluVariant::tanh ? " gelu_tanh" : " gelu_erf") : "")
      << (bias ? " bias " + std::string(dtype_name(bias_dtype)) : "")
      << (aux ? " aux " + std::string(dtype_name(aux_dtype)) : "") << " isa " << isa_name(active_isa());
    return o.str();
  }
};

// Runs linear_forward on random inputs and checks y (and aux) against the double reference.
void check_forward(const ForwardCase& c, std::mt19937_64& rng) {
  SCOPED_TRACE(c.describe());
  const auto [batch, in, out] = c.s;
  Buffer x(c.x, batch * in), w(c.w, out * in), y(c.y, batch * out);
  Buffer bias(c.bias_dtype, out), aux(c.aux_dtype, batch * out);
  x.fill_normal(rng, 0.0, 1.0);
  w.fill_normal(rng, 0.0, 1.0 / std::sqrt(static_cast<double>(in > 0 ? in : 1)));
  bias.fill_normal(rng, 0.0, 0.5);
  y.poison();
  aux.poison();

  LinearForwardArgs a;
  a.x = TensorView(x.data(), c.x, {batch, in});
  a.w = TensorView(w.data(), c.w, {out, in});
  if (c.bias) a.bias = TensorView(bias.data(), c.bias_dtype, {out});
  a.y = TensorView(y.data(), c.y, {batch, out});
  a.gelu = c.gelu;
  a.gelu_variant = c.variant;
  if (c.aux) a.aux = TensorView(aux.data(), c.aux_dtype, {batch, out});
  a.fp16_mode = c.mode;
  linear_forward(a);

  const std::vector<RefSum> ref =
      testing::ref_x_wt(testing::gemm_operands(x, c.mode), testing::gemm_operands(w, c.mode), batch, in, out);
  const double slack = testing::alt_mixed_slack(c.x, c.w, c.mode);
  Checker check;
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t o = 0; o < out; ++o) {
      const std::int64_t i = b * out + o;
      const RefSum& r = ref[static_cast<std::size_t>(i)];
      const double bv = c.bias ? bias.get(o) : 0.0;
      const double pre = r.value + bv;
      const double pre_bound = testing::fp32_sum_bound(in + 1, r.abs_sum + std::fabs(bv)) + slack * r.abs_sum;
      if (c.aux) check.near("aux", i, aux.get(i), pre, pre_bound + testing::rounding_bound(c.aux_dtype, pre, c.mode));
      const double expected = c.gelu ? testing::gelu_ref(pre, c.variant) : pre;
      const double bound = c.gelu ? testing::kGeluGradMax * pre_bound + testing::gelu_eval_bound(pre) : pre_bound;
      check.near("y", i, y.get(i), expected, bound + testing::rounding_bound(c.y, expected, c.mode));
    }
}

TEST(Linear, ForwardMatchesDoubleReferenceForEveryDtypeBiasAndGelu) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const Shape shapes[] = {{1, 1, 1}, {7, 33, 17}, {13, 64, 48}, {3, 300, 5}};
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (const Shape& s : shapes)
      for (DType xt : kDtypes)
        for (DType wt : kDtypes)
          for (DType yt : kDtypes)
            for (Fp16Mode mode : modes_for({xt, wt}))
              for (int act = 0; act < 3; ++act)
                for (int bias = 0; bias < 3; ++bias) {
                  ForwardCase c{s, xt, wt, yt, mode};
                  c.gelu = act > 0;
                  c.variant = act == 2 ? GeluVariant::erf : GeluVariant::tanh;
                  c.bias = bias > 0;
                  c.bias_dtype = bias == 2 ? DType::f32 : yt;
                  // aux: absent, y's dtype or f32, varied with the bias choice.
                  c.aux = c.gelu && bias != 1;
                  c.aux_dtype = bias == 0 ? yt : DType::f32;
                  check_forward(c, rng);
                  if (HasFailure()) return;
                }
  }
}

TEST(Linear, ForwardHandlesZeroSizedDims) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    // in = 0: y = act(bias), aux = bias.
    for (int act = 0; act < 2; ++act) {
      ForwardCase c{{4, 0, 9}, DType::bf16, DType::bf16, DType::f32};
      c.bias = true;
      c.gelu = act == 1;
      c.aux = c.gelu;
      check_forward(c, rng);
    }
    // batch = 0 or out = 0: nothing to compute; null pointers are fine for empty operands.
    for (Shape s : {Shape{0, 5, 3}, Shape{4, 5, 0}}) {
      LinearForwardArgs a;
      a.x = TensorView(nullptr, DType::f32, {s.batch, s.in});
      a.w = TensorView(nullptr, DType::f32, {s.out, s.in});
      a.y = TensorView(nullptr, DType::f32, {s.batch, s.out});
      a.gelu = true;
      EXPECT_NO_THROW(linear_forward(a));
    }
  }
}

// ---------------------------------------------------------------------------- backward

struct BackwardCase {
  Shape s;
  DType dy, x, w, dx, dw;
  Fp16Mode mode = Fp16Mode::exact;
  bool want_dx = true, want_dw = true, want_db = true;
  DType db_dtype = DType::f32;
  bool accumulate = false;
  bool below_gelu = false;
  GeluVariant variant = GeluVariant::tanh;
  DType aux_dtype = DType::f32;
  bool want_below_db = false;
  DType below_db_dtype = DType::f32;

  std::string describe() const {
    std::ostringstream o;
    o << "batch " << s.batch << " in " << s.in << " out " << s.out << " dy " << dtype_name(dy) << " x " << dtype_name(x)
      << " w " << dtype_name(w) << " fp16 " << mode_name(mode) << (want_dx ? " dx " + std::string(dtype_name(dx)) : "")
      << (want_dw ? " dw " + std::string(dtype_name(dw)) : "")
      << (want_db ? " db " + std::string(dtype_name(db_dtype)) : "") << (accumulate ? " accumulate" : "")
      << (below_gelu ? (variant == GeluVariant::tanh ? " dgelu_tanh" : " dgelu_erf") : "")
      << (below_gelu ? " aux " + std::string(dtype_name(aux_dtype)) : "")
      << (want_below_db ? " below_db " + std::string(dtype_name(below_db_dtype)) : "") << " isa "
      << isa_name(active_isa());
    return o.str();
  }
};

void check_backward(const BackwardCase& c, std::mt19937_64& rng) {
  SCOPED_TRACE(c.describe());
  const auto [batch, in, out] = c.s;
  Buffer dy(c.dy, batch * out), x(c.x, batch * in), w(c.w, out * in), aux(c.aux_dtype, batch * in);
  Buffer dx(c.dx, batch * in), dw(c.dw, out * in), db(c.db_dtype, out), below_db(c.below_db_dtype, in);
  dy.fill_normal(rng, 0.0, 1.0);
  x.fill_normal(rng, 0.0, 1.0);
  w.fill_normal(rng, 0.0, 1.0);
  aux.fill_normal(rng, 0.0, 1.5);
  dx.poison();
  // Accumulation adds to what is there; otherwise every element must be written.
  for (Buffer* grad : {&dw, &db, &below_db}) {
    if (c.accumulate)
      grad->fill_normal(rng, 0.0, 2.0);
    else
      grad->poison();
  }
  const Buffer dw_old = dw, db_old = db, below_db_old = below_db;

  LinearBackwardArgs a;
  a.dy = TensorView(dy.data(), c.dy, {batch, out});
  a.x = TensorView(x.data(), c.x, {batch, in});
  a.w = TensorView(w.data(), c.w, {out, in});
  if (c.want_dx) a.dx = TensorView(dx.data(), c.dx, {batch, in});
  if (c.want_dw) a.dw = TensorView(dw.data(), c.dw, {out, in});
  if (c.want_db) a.db = TensorView(db.data(), c.db_dtype, {out});
  a.accumulate = c.accumulate;
  a.below_gelu = c.below_gelu;
  a.below_gelu_variant = c.variant;
  if (c.below_gelu) a.below_aux = TensorView(aux.data(), c.aux_dtype, {batch, in});
  if (c.want_below_db) a.below_db = TensorView(below_db.data(), c.below_db_dtype, {in});
  a.fp16_mode = c.mode;
  linear_backward(a);

  Checker check;
  const std::vector<double> dyv = testing::gemm_operands(dy, c.mode);
  if (c.want_dx) {
    // dx = (dy w) [* gelu'(aux)]; below_db = column sums of the fp32 values before rounding.
    const std::vector<RefSum> ref = testing::ref_dy_w(dyv, testing::gemm_operands(w, c.mode), batch, in, out);
    const double slack = testing::alt_mixed_slack(c.dy, c.w, c.mode);
    std::vector<double> value(ref.size()), bound(ref.size());
    for (std::int64_t i = 0; i < batch * in; ++i) {
      const RefSum& r = ref[static_cast<std::size_t>(i)];
      const double pre_bound = testing::fp32_sum_bound(out, r.abs_sum) + slack * r.abs_sum;
      double v = r.value, e = pre_bound;
      if (c.below_gelu) {
        const double g = testing::gelu_grad_ref(aux.get(i), c.variant);
        v = r.value * g;
        e = pre_bound * std::fabs(g) + testing::gelu_grad_eval_bound(aux.get(i)) * std::fabs(r.value);
      }
      value[static_cast<std::size_t>(i)] = v;
      bound[static_cast<std::size_t>(i)] = e;
      check.near("dx", i, dx.get(i), v, e + testing::rounding_bound(c.dx, v, c.mode));
    }
    if (c.want_below_db) {
      const std::vector<RefSum> sums = testing::ref_column_sums(value, batch, in);
      const std::vector<RefSum> bounds = testing::ref_column_sums(bound, batch, in);
      for (std::int64_t i = 0; i < in; ++i) {
        const double old = c.accumulate ? below_db_old.get(i) : 0.0;
        const double expected = sums[static_cast<std::size_t>(i)].value + old;
        const double e = bounds[static_cast<std::size_t>(i)].value +
                         testing::fp32_sum_bound(batch + 1, sums[static_cast<std::size_t>(i)].abs_sum + std::fabs(old));
        check.near("below_db", i, below_db.get(i), expected,
                   e + testing::rounding_bound(c.below_db_dtype, expected, c.mode));
      }
    }
  } else {
    EXPECT_EQ(below_db.bytes, below_db_old.bytes);
  }
  if (c.want_dw) {
    const std::vector<RefSum> ref = testing::ref_dyt_x(dyv, testing::gemm_operands(x, c.mode), batch, in, out);
    const double slack = testing::alt_mixed_slack(c.dy, c.x, c.mode);
    for (std::int64_t i = 0; i < out * in; ++i) {
      const RefSum& r = ref[static_cast<std::size_t>(i)];
      const double old = c.accumulate ? dw_old.get(i) : 0.0;
      const double expected = r.value + old;
      const double e = testing::fp32_sum_bound(batch + 1, r.abs_sum + std::fabs(old)) + slack * r.abs_sum;
      check.near("dw", i, dw.get(i), expected, e + testing::rounding_bound(c.dw, expected, c.mode));
    }
  }
  if (c.want_db) {
    // db = column sums of dy; under flush/alt gemm may sum dy as read for the product (flushed /
    // rounded to bf16) or as stored: both pass.
    std::vector<double> raw(static_cast<std::size_t>(dy.size()));
    for (std::int64_t i = 0; i < dy.size(); ++i) raw[static_cast<std::size_t>(i)] = dy.get(i);
    const std::vector<RefSum> sums = testing::ref_column_sums(raw, batch, out);
    for (std::int64_t o = 0; o < out; ++o) {
      const RefSum& r = sums[static_cast<std::size_t>(o)];
      const double old = c.accumulate ? db_old.get(o) : 0.0;
      const double expected = r.value + old;
      double e = testing::fp32_sum_bound(batch + 1, r.abs_sum + std::fabs(old));
      if (c.dy == DType::f16 && c.mode != Fp16Mode::exact)
        e += 0x1p-8 * r.abs_sum + static_cast<double>(batch) * 0x1p-14;
      check.near("db", o, db.get(o), expected, e + testing::rounding_bound(c.db_dtype, expected, c.mode));
    }
  }
  if (!c.want_dw) {
    EXPECT_EQ(dw.bytes, dw_old.bytes);
  }
  if (!c.want_db) {
    EXPECT_EQ(db.bytes, db_old.bytes);
  }
}

// Four call patterns per dtype combination: plain, DGELU + accumulate, DGELU_BGRAD + db
// accumulate, DGELU_BGRAD + db without dw.
BackwardCase backward_variant(Shape s, DType t1, DType t2, DType t3, Fp16Mode mode, int v) {
  // dy = t1, x = t2, w = t3; dx in x's dtype, dw in w's (what a training graph does).
  BackwardCase c{s, t1, t2, t3, t2, t3, mode};
  switch (v) {
    case 0: c.db_dtype = t3; break;
    case 1:
      c.want_db = false;
      c.accumulate = true;
      c.below_gelu = true;
      c.variant = GeluVariant::tanh;
      c.aux_dtype = c.dx;
      break;
    case 2:
      c.accumulate = true;
      c.below_gelu = true;
      c.variant = GeluVariant::erf;
      c.want_below_db = true;
      break;
    default:
      c.want_dw = false;
      c.db_dtype = t1;
      c.below_gelu = true;
      c.aux_dtype = c.dx;
      c.want_below_db = true;
      c.below_db_dtype = c.dx;
      break;
  }
  return c;
}

TEST(Linear, BackwardMatchesDoubleReferenceForEveryDtypeAndFusion) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const Shape shapes[] = {{1, 1, 1}, {9, 40, 23}, {37, 17, 64}, {70, 5, 3}};
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (const Shape& s : shapes)
      for (DType t1 : kDtypes)
        for (DType t2 : kDtypes)
          for (DType t3 : kDtypes)
            for (Fp16Mode mode : modes_for({t1, t2, t3}))
              for (int v = 0; v < 4; ++v) {
                check_backward(backward_variant(s, t1, t2, t3, mode, v), rng);
                if (HasFailure()) return;
              }
  }
}

TEST(Linear, BackwardHandlesZeroSizedDims) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    // batch = 0: dw and db are 0 (or unchanged when accumulating), below_db too.
    // in = 0: dx and dw are empty, db still comes from dy. out = 0: dx = 0 * gelu'.
    for (Shape s : {Shape{0, 6, 5}, Shape{5, 0, 6}, Shape{5, 6, 0}})
      for (int v = 0; v < 4; ++v)
        check_backward(backward_variant(s, DType::bf16, DType::f32, DType::bf16, Fp16Mode::exact, v), rng);
  }
}

// Larger shapes: m and n over many micro-tiles and both threads' shares, long k (520), each
// dtype once (the sweeps above cover the dtype combinations on small shapes).
TEST(Linear, LargerShapesMatchTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const Shape s{40, 520, 90};
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (DType t : kDtypes) {
      const Fp16Mode mode = t == DType::f16 ? Fp16Mode::alt : Fp16Mode::exact;
      ForwardCase f{s, t, t, t, mode};
      f.gelu = true;
      f.bias = true;
      f.bias_dtype = DType::f32;
      f.aux = true;
      f.aux_dtype = t;
      check_forward(f, rng);
      check_backward(backward_variant(s, t, t, t, mode, 2), rng);
      check_backward(backward_variant({520, 40, 90}, t, t, t, mode, 0), rng);
    }
  }
}

// ---------------------------------------------------------------------------- exactness

// Small integers are exact in every dtype and their sums exact in fp32: results are bit-exact.
TEST(Linear, SmallIntegersGiveExactResultsInEveryDtype) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> small(-4, 4);
  const std::int64_t batch = 11, in = 37, out = 19;
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (DType t : kDtypes)
      for (DType u : kDtypes) {
        SCOPED_TRACE(::testing::Message() << dtype_name(t) << " x " << dtype_name(u) << " isa " << isa_name(isa));
        Buffer x(t, batch * in), w(u, out * in), bias(DType::f32, out), dy(t, batch * out);
        for (Buffer* b : {&x, &w, &bias, &dy})
          for (std::int64_t i = 0; i < b->size(); ++i) b->set(i, small(rng));
        Buffer y(DType::f32, batch * out), dx(DType::f32, batch * in), dw(DType::f32, out * in), db(DType::f32, out);
        for (Buffer* b : {&y, &dx, &dw, &db}) b->poison();
        for (Fp16Mode mode : modes_for({t, u})) {
          LinearForwardArgs f;
          f.x = TensorView(x.data(), t, {batch, in});
          f.w = TensorView(w.data(), u, {out, in});
          f.bias = TensorView(bias.data(), DType::f32, {out});
          f.y = TensorView(y.data(), DType::f32, {batch, out});
          f.fp16_mode = mode;
          linear_forward(f);
          LinearBackwardArgs g;
          g.dy = TensorView(dy.data(), t, {batch, out});
          g.x = TensorView(x.data(), t, {batch, in});
          g.w = TensorView(w.data(), u, {out, in});
          g.dx = TensorView(dx.data(), DType::f32, {batch, in});
          g.dw = TensorView(dw.data(), DType::f32, {out, in});
          g.db = TensorView(db.data(), DType::f32, {out});
          g.fp16_mode = mode;
          linear_backward(g);
          for (std::int64_t b = 0; b < batch; ++b)
            for (std::int64_t o = 0; o < out; ++o) {
              double s = bias.get(o);
              for (std::int64_t i = 0; i < in; ++i) s += x.get(b * in + i) * w.get(o * in + i);
              ASSERT_EQ(y.get(b * out + o), s) << "y " << b << "," << o;
            }
          for (std::int64_t b = 0; b < batch; ++b)
            for (std::int64_t i = 0; i < in; ++i) {
              double s = 0;
              for (std::int64_t o = 0; o < out; ++o) s += dy.get(b * out + o) * w.get(o * in + i);
              ASSERT_EQ(dx.get(b * in + i), s) << "dx " << b << "," << i;
            }
          for (std::int64_t o = 0; o < out; ++o) {
            double sb = 0;
            for (std::int64_t b = 0; b < batch; ++b) sb += dy.get(b * out + o);
            ASSERT_EQ(db.get(o), sb) << "db " << o;
            for (std::int64_t i = 0; i < in; ++i) {
              double s = 0;
              for (std::int64_t b = 0; b < batch; ++b) s += dy.get(b * out + o) * x.get(b * in + i);
              ASSERT_EQ(dw.get(o * in + i), s) << "dw " << o << "," << i;
            }
          }
        }
      }
  }
}

// The fp16 mode of the args reaches every GEMM: f16 operands chosen so that the three modes
// give three different exact answers. 2^-20 is an f16 subnormal (flush reads 0, bf16 keeps it);
// 1 + 2^-10 is an f16 but rounds to 1 in bf16.
TEST(Linear, Fp16ModeIsHandedToEveryGemm) {
  const std::int64_t batch = 3, in = 5, out = 4;
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (double v : {0x1p-20, 1.0 + 0x1p-10}) {
      for (Fp16Mode mode : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt}) {
        SCOPED_TRACE(::testing::Message() << "value " << v << " mode " << mode_name(mode) << " isa " << isa_name(isa));
        const double seen = mode == Fp16Mode::flush && v < 0x1p-14 ? 0.0 : mode == Fp16Mode::alt && v > 1.0 ? 1.0 : v;
        Buffer x(DType::f16, batch * in), w(DType::f16, out * in), dy(DType::f16, batch * out);
        for (std::int64_t i = 0; i < x.size(); ++i) x.set(i, v);
        for (std::int64_t i = 0; i < w.size(); ++i) w.set(i, 1.0);
        for (std::int64_t i = 0; i < dy.size(); ++i) dy.set(i, v);
        Buffer y(DType::f32, batch * out), dx(DType::f32, batch * in), dw(DType::f32, out * in);
        LinearForwardArgs f;
        f.x = TensorView(x.data(), DType::f16, {batch, in});
        f.w = TensorView(w.data(), DType::f16, {out, in});
        f.y = TensorView(y.data(), DType::f32, {batch, out});
        f.fp16_mode = mode;
        linear_forward(f);
        LinearBackwardArgs g;
        Buffer ones(DType::f16, batch * in);
        for (std::int64_t i = 0; i < ones.size(); ++i) ones.set(i, 1.0);
        g.dy = TensorView(dy.data(), DType::f16, {batch, out});
        g.x = TensorView(ones.data(), DType::f16, {batch, in});  // dw = column sums of dy
        g.w = TensorView(w.data(), DType::f16, {out, in});
        g.dx = TensorView(dx.data(), DType::f32, {batch, in});
        g.dw = TensorView(dw.data(), DType::f32, {out, in});
        g.fp16_mode = mode;
        linear_backward(g);
        for (std::int64_t i = 0; i < y.size(); ++i) ASSERT_EQ(y.get(i), static_cast<double>(in) * seen);
        for (std::int64_t i = 0; i < dx.size(); ++i) ASSERT_EQ(dx.get(i), static_cast<double>(out) * seen);
        for (std::int64_t i = 0; i < dw.size(); ++i) ASSERT_EQ(dw.get(i), static_cast<double>(batch) * seen);
      }
    }
  }
}

// The LinearReport holds one GemmReport per GEMM run, in order, each the same as gemm's own
// report of that call: here every x element is an fp16 subnormal, so the forward GEMM and the dw
// GEMM each count batch * in subnormal inputs; the dx GEMM (dy w) reads none.
TEST(Linear, ReportsEachGemmItRan) {
  const std::int64_t batch = 3, in = 5, out = 4;
  Buffer x(DType::f16, batch * in), w(DType::f16, out * in), dy(DType::f16, batch * out);
  for (std::int64_t i = 0; i < x.size(); ++i) x.set(i, 0x1p-20);
  for (std::int64_t i = 0; i < w.size(); ++i) w.set(i, 1.0);
  for (std::int64_t i = 0; i < dy.size(); ++i) dy.set(i, 0.5);
  Buffer y(DType::f16, batch * out), dx(DType::f32, batch * in), dw(DType::f32, out * in), db(DType::f32, out);
  LinearForwardArgs f;
  f.x = TensorView(x.data(), DType::f16, {batch, in});
  f.w = TensorView(w.data(), DType::f16, {out, in});
  f.y = TensorView(y.data(), DType::f16, {batch, out});
  f.fp16_mode = Fp16Mode::flush;
  LinearReport report;
  report.gemm_count = 7;  // overwritten, not added to
  linear_forward(f, &report);
  ASSERT_EQ(report.gemm_count, 1);
  EXPECT_TRUE(report.gemms[0].fp16);
  EXPECT_EQ(report.gemms[0].fp16_mode, Fp16Mode::flush);
  EXPECT_EQ(report.gemms[0].fp16_subnormal_inputs, batch * in);
  EXPECT_EQ(report.gemms[0].fp16_subnormal_outputs, 0);  // flushed inputs: y = 0
  EXPECT_STREQ(report.gemms[0].kernel, linear_kernel_name(f));

  LinearBackwardArgs g;
  g.dy = TensorView(dy.data(), DType::f16, {batch, out});
  g.x = f.x;
  g.w = f.w;
  g.dx = TensorView(dx.data(), DType::f32, {batch, in});
  g.dw = TensorView(dw.data(), DType::f32, {out, in});
  g.db = TensorView(db.data(), DType::f32, {out});
  g.fp16_mode = Fp16Mode::alt;
  linear_backward(g, &report);
  ASSERT_EQ(report.gemm_count, 2);  // dx, then dw with BGRADB for db
  for (int i = 0; i < 2; ++i) EXPECT_EQ(report.gemms[i].fp16_mode, Fp16Mode::alt);
  EXPECT_EQ(report.gemms[0].fp16_subnormal_inputs, 0);
  EXPECT_EQ(report.gemms[1].fp16_subnormal_inputs, batch * in);
  g.dw = TensorView();  // db alone: one bias-gradient GEMM
  g.dx = TensorView();
  linear_backward(g, &report);
  ASSERT_EQ(report.gemm_count, 1);
  // Nothing to compute: an empty report.
  g.dy = TensorView();
  g.db = TensorView();
  linear_backward(g, &report);
  EXPECT_EQ(report.gemm_count, 0);
}

// Results do not depend on the thread count (gemm splits reductions by data blocks).
TEST(Linear, OneAndTwoThreadsGiveIdenticalBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::int64_t batch = 150, in = 96, out = 130;
  Buffer x(DType::bf16, batch * in), w(DType::bf16, out * in), bias(DType::f32, out), dy(DType::bf16, batch * out);
  Buffer aux_below(DType::bf16, batch * in);
  for (Buffer* b : {&x, &w, &bias, &dy, &aux_below}) b->fill_normal(rng, 0.0, 1.0);
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(isa_name(isa));
    std::vector<ampkit::testing::Bytes> results[2];
    for (int threads = 1; threads <= 2; ++threads) {
      testing::ThreadsScope ts(threads);
      Buffer y(DType::bf16, batch * out), aux(DType::f32, batch * out), dx(DType::bf16, batch * in),
          dw(DType::f32, out * in), db(DType::f32, out), below_db(DType::f32, in);
      LinearForwardArgs f;
      f.x = TensorView(x.data(), DType::bf16, {batch, in});
      f.w = TensorView(w.data(), DType::bf16, {out, in});
      f.bias = TensorView(bias.data(), DType::f32, {out});
      f.y = TensorView(y.data(), DType::bf16, {batch, out});
      f.gelu = true;
      f.aux = TensorView(aux.data(), DType::f32, {batch, out});
      linear_forward(f);
      LinearBackwardArgs g;
      g.dy = TensorView(dy.data(), DType::bf16, {batch, out});
      g.x = TensorView(x.data(), DType::bf16, {batch, in});
      g.w = TensorView(w.data(), DType::bf16, {out, in});
      g.dx = TensorView(dx.data(), DType::bf16, {batch, in});
      g.dw = TensorView(dw.data(), DType::f32, {out, in});
      g.db = TensorView(db.data(), DType::f32, {out});
      g.below_gelu = true;
      g.below_aux = TensorView(aux_below.data(), DType::bf16, {batch, in});
      g.below_db = TensorView(below_db.data(), DType::f32, {in});
      linear_backward(g);
      for (Buffer* b : {&y, &aux, &dx, &dw, &db, &below_db}) results[threads - 1].push_back(b->bytes);
    }
    for (std::size_t i = 0; i < results[0].size(); ++i) EXPECT_TRUE(results[0][i] == results[1][i]) << "output " << i;
  }
}

// ---------------------------------------------------------------------------- the reference

// The reference's backward formulas, checked against central finite differences in double of
// L = sum(dy * (gelu(p) wᵀ + b)): dL/dp = (dy w) * gelu'(p) (the MLP fusion), dL/dw = dyᵀ x
// with x = gelu(p), dL/db = column sums of dy, and the layer below's bias gradient = column
// sums of dL/dp.
TEST(Linear, ReferenceBackwardMatchesFiniteDifferences) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::int64_t batch = 3, in = 4, out = 5;
  for (GeluVariant v : {GeluVariant::tanh, GeluVariant::erf}) {
    std::vector<double> p(batch * in), w(out * in), b(out), dy(batch * out);
    for (auto* vec : {&p, &w, &b, &dy})
      for (double& e : *vec) e = normal(rng);
    auto loss = [&](const std::vector<double>& pp, const std::vector<double>& ww, const std::vector<double>& bb) {
      std::vector<double> x(pp.size());
      for (std::size_t i = 0; i < pp.size(); ++i) x[i] = testing::gelu_ref(pp[i], v);
      const std::vector<RefSum> y = testing::ref_x_wt(x, ww, batch, in, out);
      double l = 0;
      for (std::int64_t r = 0; r < batch; ++r)
        for (std::int64_t o = 0; o < out; ++o)
          l += dy[static_cast<std::size_t>(r * out + o)] *
               (y[static_cast<std::size_t>(r * out + o)].value + bb[static_cast<std::size_t>(o)]);
      return l;
    };
    auto fd = [&](std::vector<double>& param, std::size_t i) {
      const double h = 1e-5, keep = param[i];
      param[i] = keep + h;
      const double up = loss(p, w, b);
      param[i] = keep - h;
      const double down = loss(p, w, b);
      param[i] = keep;
      return (up - down) / (2 * h);
    };
    std::vector<double> x(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) x[i] = testing::gelu_ref(p[i], v);
    const std::vector<RefSum> dyw = testing::ref_dy_w(dy, w, batch, in, out);
    std::vector<double> dp(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
      dp[i] = dyw[i].value * testing::gelu_grad_ref(p[i], v);
      EXPECT_NEAR(dp[i], fd(p, i), 1e-7) << "dp " << i;
    }
    const std::vector<RefSum> dw = testing::ref_dyt_x(dy, x, batch, in, out);
    for (std::size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(dw[i].value, fd(w, i), 1e-7) << "dw " << i;
    const std::vector<RefSum> db = testing::ref_column_sums(dy, batch, out);
    for (std::size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(db[i].value, fd(b, i), 1e-7) << "db " << i;
    // The layer below's bias gradient: p = x_below wᵀ_below + b_below, so dL/db_below = sum dp.
    const std::vector<RefSum> below_db = testing::ref_column_sums(dp, batch, in);
    for (std::int64_t i = 0; i < in; ++i) {
      double fd_sum = 0;
      for (std::int64_t r = 0; r < batch; ++r) fd_sum += fd(p, static_cast<std::size_t>(r * in + i));
      EXPECT_NEAR(below_db[static_cast<std::size_t>(i)].value, fd_sum, 1e-6) << "below_db " << i;
    }
  }
}

}  // namespace
}  // namespace ampkit
