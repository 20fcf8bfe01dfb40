// ampkit::conv2d (include/ampkit/ops/conv2d.hpp): every entry of the three kernel lists against
// the double reference on fresh random inputs, over edge shapes (1x1, 3x3, stride 2, padding,
// dilation, groups, depthwise, odd sizes, batch 1), both layouts and every dtype and fp16 mode,
// within a bound derived from the dtype and the reduction length; alt equal to the convolution of
// the bf16-rounded operands; bits independent of the thread count; errors that name the argument
// and write nothing; and the convolution's fp16 policy, independent of the GEMM's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/numerics/conv2d_policy.hpp"
#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/ops/conv2d.hpp"
#include "cpu/conv2d/conv2d_kernels.hpp"
#include "ops/conv2d/conv2d_front_end.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;

struct Shape {
  std::int64_t n, c, h, w, k, r, s;
  int stride, pad, dilation, groups;
};

// Edge shapes: 1x1, 3x3, stride 2, padding, dilation, groups, depthwise, odd sizes, batch 1.
const Shape kShapes[] = {
    {2, 3, 5, 5, 4, 1, 1, 1, 0, 1, 1},    // 1x1
    {1, 4, 7, 6, 5, 3, 3, 1, 1, 1, 1},    // 3x3 pad 1, batch 1, odd sizes
    {2, 5, 9, 8, 3, 3, 3, 2, 1, 1, 1},    // stride 2
    {1, 3, 9, 9, 2, 3, 2, 1, 2, 2, 1},    // dilation 2, rectangular filter, pad 2
    {2, 6, 6, 5, 4, 3, 3, 1, 1, 1, 2},    // groups 2
    {2, 8, 7, 7, 8, 3, 3, 2, 1, 1, 8},    // depthwise, stride 2
    {1, 19, 4, 5, 10, 1, 3, 1, 0, 1, 1},  // C not a multiple of 8, 1x3
    {3, 16, 5, 5, 17, 3, 3, 1, 1, 1, 1},  // channels past one 8-lane block
    {1, 2, 3, 3, 3, 3, 3, 3, 0, 1, 1},    // stride larger than the output (P = Q = 1)
    {1, 24, 6, 7, 40, 1, 1, 1, 0, 1, 1},  // 1x1 on the GEMM engines, batch 1 (every pass, both layouts)
};

Conv2dParams params_of(const Shape& s, ConvLayout layout, Fp16Mode mode) {
  Conv2dParams p;
  p.layout = layout;
  p.stride_h = p.stride_w = s.stride;
  p.pad_h = p.pad_w = s.pad;
  p.dilation_h = p.dilation_w = s.dilation;
  p.groups = s.groups;
  p.fp16_mode = mode;
  return p;
}

TensorView act_view(Buffer& b, ConvLayout l, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  if (l == ConvLayout::nchw) return TensorView(b.data(), b.dtype, {n, c, h, w});
  return TensorView(b.data(), b.dtype, {n, h, w, c});
}
TensorView filt_view(Buffer& b, ConvLayout l, std::int64_t k, std::int64_t cg, std::int64_t r, std::int64_t s) {
  if (l == ConvLayout::nchw) return TensorView(b.data(), b.dtype, {k, cg, r, s});
  return TensorView(b.data(), b.dtype, {k, r, s, cg});
}

// A tensor of N(0, 1) values; for f16 about one in twelve set to a subnormal (so flush and the
// counters have something to do).
Buffer random_buffer(std::mt19937_64& rng, DType t, std::int64_t n) {
  Buffer b(t, n);
  b.fill_normal(rng, 0.0, 1.0);
  if (t == DType::f16)
    for (std::int64_t i = 0; i < n; i += 12)
      b.set(i, (i % 24 == 0 ? 1.0 : -1.0) * 3.0e-6 * static_cast<double>(1 + i % 5));
  return b;
}

Buffer abs_copy(const Buffer& b) {
  Buffer out(b.dtype, b.size());
  for (std::int64_t i = 0; i < b.size(); ++i) out.set(i, std::fabs(b.get(i)));
  return out;
}

// The operands of one call of `pass`, random; `abs` copies give the magnitude sum of the bound.
struct Operands {
  Buffer x, w, y, bias, dy, dx, dw, dbias;
};

ops::Conv2dProblem problem_of(ops::Conv2dPass pass, Operands& o, const Shape& s, ConvLayout l, DType, Fp16Mode mode,
                              bool with_bias, bool accumulate, DType param_t) {
  const Conv2dParams pr = params_of(s, l, mode);
  const std::int64_t p = conv2d_output_size(s.h, s.r, s.stride, s.pad, s.dilation);
  const std::int64_t q = conv2d_output_size(s.w, s.s, s.stride, s.pad, s.dilation);
  if (pass == ops::Conv2dPass::forward) {
    Conv2dForwardArgs a;
    a.x = act_view(o.x, l, s.n, s.c, s.h, s.w);
    a.w = filt_view(o.w, l, s.k, s.c / s.groups, s.r, s.s);
    if (with_bias) a.bias = TensorView(o.bias.data(), o.bias.dtype, {s.k});
    a.y = act_view(o.y, l, s.n, s.k, p, q);
    a.params = pr;
    return ops::validate_conv2d(a);
  }
  if (pass == ops::Conv2dPass::backward_data) {
    Conv2dBackwardDataArgs a;
    a.dy = act_view(o.dy, l, s.n, s.k, p, q);
    a.w = filt_view(o.w, l, s.k, s.c / s.groups, s.r, s.s);
    a.dx = act_view(o.dx, l, s.n, s.c, s.h, s.w);
    a.params = pr;
    return ops::validate_conv2d(a);
  }
  Conv2dBackwardWeightArgs a;
  a.dy = act_view(o.dy, l, s.n, s.k, p, q);
  a.x = act_view(o.x, l, s.n, s.c, s.h, s.w);
  a.dw = filt_view(o.dw, l, s.k, s.c / s.groups, s.r, s.s);
  if (with_bias) a.dbias = TensorView(o.dbias.data(), o.dbias.dtype, {s.k});
  a.accumulate = accumulate;
  a.params = pr;
  (void)param_t;
  return ops::validate_conv2d(a);
}

Operands random_operands(std::mt19937_64& rng, const Shape& s, DType t, DType param_t) {
  const std::int64_t p = conv2d_output_size(s.h, s.r, s.stride, s.pad, s.dilation);
  const std::int64_t q = conv2d_output_size(s.w, s.s, s.stride, s.pad, s.dilation);
  Operands o;
  o.x = random_buffer(rng, t, s.n * s.c * s.h * s.w);
  o.w = random_buffer(rng, t, s.k * (s.c / s.groups) * s.r * s.s);
  o.dy = random_buffer(rng, t, s.n * s.k * p * q);
  o.bias = random_buffer(rng, param_t, s.k);
  o.dbias = random_buffer(rng, param_t, s.k);
  o.dw = random_buffer(rng, param_t, s.k * (s.c / s.groups) * s.r * s.s);
  o.y = Buffer(t, s.n * s.k * p * q);
  o.dx = Buffer(t, s.n * s.c * s.h * s.w);
  o.y.poison();
  o.dx.poison();
  return o;
}

Operands abs_operands(const Operands& o) {
  Operands a;
  a.x = abs_copy(o.x), a.w = abs_copy(o.w), a.dy = abs_copy(o.dy), a.bias = abs_copy(o.bias);
  a.dbias = abs_copy(o.dbias), a.dw = abs_copy(o.dw);
  a.y = Buffer(o.y.dtype, o.y.size()), a.dx = Buffer(o.dx.dtype, o.dx.size());
  return a;
}

// The outputs of a pass (the buffers a call writes), for comparing.
std::vector<const Buffer*> outputs(ops::Conv2dPass pass, const Operands& o) {
  if (pass == ops::Conv2dPass::forward) return {&o.y};
  if (pass == ops::Conv2dPass::backward_data) return {&o.dx};
  return {&o.dw, &o.dbias};
}

std::span<const ops::Conv2dEntry> list_of(ops::Conv2dPass pass) { return ops::conv2d_kernels(pass); }

const char* pass_name(ops::Conv2dPass pass) {
  return pass == ops::Conv2dPass::forward ? "forward" : pass == ops::Conv2dPass::backward_data ? "bwd_data" : "bwd_w";
}

// Every entry of every list against the reference, on every ISA the machine has.
void check_all_entries(ops::Conv2dPass pass, DType t, DType param_t, Fp16Mode mode, bool accumulate) {
  const std::uint64_t seed = testing::fresh_seed();
  std::mt19937_64 rng(seed);
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (const ConvLayout l : {ConvLayout::nchw, ConvLayout::nhwc})
      for (const Shape& s : kShapes) {
        SCOPED_TRACE(::testing::Message()
                     << pass_name(pass) << " " << dtype_name(t) << " mode " << static_cast<int>(mode)
                     << (l == ConvLayout::nchw ? " nchw" : " nhwc") << " shape n" << s.n << " c" << s.c << " " << s.h
                     << "x" << s.w << " k" << s.k << " " << s.r << "x" << s.s << " st" << s.stride << " pad" << s.pad
                     << " dil" << s.dilation << " g" << s.groups << " seed " << seed);
        const Operands base = random_operands(rng, s, t, param_t);
        Operands ref = base;
        Operands mag = abs_operands(base);
        ops::Conv2dCounters c_ref, c_mag;
        cpu::conv2d_reference(problem_of(pass, ref, s, l, t, mode, true, accumulate, param_t), c_ref);
        // Magnitudes: the reference on |operands| (same mode) in the same dtype, rounded once.
        cpu::conv2d_reference(problem_of(pass, mag, s, l, t, mode, true, accumulate, param_t), c_mag);
        const std::int64_t length = problem_of(pass, ref, s, l, t, mode, true, accumulate, param_t).reduction_length();
        for (const ops::Conv2dEntry& entry : list_of(pass)) {
          if (ops::decline_reason(entry, problem_of(pass, ref, s, l, t, mode, true, accumulate, param_t)) != nullptr)
            continue;
          SCOPED_TRACE(entry.name);
          Operands got = base;
          ops::Conv2dCounters counters;
          entry.run(problem_of(pass, got, s, l, t, mode, true, accumulate, param_t), counters);
          EXPECT_EQ(counters.fp16_subnormal_inputs, c_ref.fp16_subnormal_inputs);
          const auto want = outputs(pass, ref), have = outputs(pass, got), m = outputs(pass, mag);
          for (std::size_t b = 0; b < want.size(); ++b) {
            const bool flush = mode == Fp16Mode::flush && want[b]->dtype == DType::f16;
            int bad = 0;
            for (std::int64_t i = 0; i < want[b]->size(); ++i) {
              const double r = want[b]->get(i), g = have[b]->get(i);
              const double s_mag = m[b]->get(i) * (1.0 + 2.0 * error_bounds::unit_roundoff(m[b]->dtype));
              const double tol =
                  error_bounds::gemm_output(error_bounds::gemm_accumulation(length, s_mag), r, want[b]->dtype, flush);
              if (!(std::fabs(g - r) <= tol) && ++bad <= 3)
                ADD_FAILURE() << "output " << b << " element " << i << ": got " << g << ", want " << r << " (tol "
                              << tol << ")";
            }
          }
        }
      }
  }
}

class Conv2dEntries : public ::testing::TestWithParam<int> {};

TEST(Conv2dEntries, ForwardEveryDtypeAndMode) {
  check_all_entries(ops::Conv2dPass::forward, DType::f32, DType::f32, Fp16Mode::exact, false);
  check_all_entries(ops::Conv2dPass::forward, DType::bf16, DType::f32, Fp16Mode::exact, false);
  check_all_entries(ops::Conv2dPass::forward, DType::bf16, DType::bf16, Fp16Mode::exact, false);
  for (Fp16Mode m : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt}) {
    check_all_entries(ops::Conv2dPass::forward, DType::f16, DType::f32, m, false);
    check_all_entries(ops::Conv2dPass::forward, DType::f16, DType::f16, m, false);
  }
}

TEST(Conv2dEntries, BackwardDataEveryDtypeAndMode) {
  check_all_entries(ops::Conv2dPass::backward_data, DType::f32, DType::f32, Fp16Mode::exact, false);
  check_all_entries(ops::Conv2dPass::backward_data, DType::bf16, DType::f32, Fp16Mode::exact, false);
  for (Fp16Mode m : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt})
    check_all_entries(ops::Conv2dPass::backward_data, DType::f16, DType::f32, m, false);
}

TEST(Conv2dEntries, BackwardWeightEveryDtypeAndMode) {
  for (bool acc : {false, true}) {
    check_all_entries(ops::Conv2dPass::backward_weight, DType::f32, DType::f32, Fp16Mode::exact, acc);
    check_all_entries(ops::Conv2dPass::backward_weight, DType::bf16, DType::f32, Fp16Mode::exact, acc);
    check_all_entries(ops::Conv2dPass::backward_weight, DType::bf16, DType::bf16, Fp16Mode::exact, acc);
    for (Fp16Mode m : {Fp16Mode::exact, Fp16Mode::flush, Fp16Mode::alt}) {
      check_all_entries(ops::Conv2dPass::backward_weight, DType::f16, DType::f32, m, acc);
      check_all_entries(ops::Conv2dPass::backward_weight, DType::f16, DType::f16, m, acc);
    }
  }
}

// The reference itself against a hand-computed case: 1 image, 1 channel, 3x3 input, 2x2 filter.
TEST(Conv2dReference, HandComputedForwardAndBackward) {
  const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 0, 0, -1}, bias[1] = {0.5f};
  float y[4] = {};
  Conv2dForwardArgs a;
  a.x = TensorView(x, DType::f32, {1, 1, 3, 3});
  a.w = TensorView(w, DType::f32, {1, 1, 2, 2});
  a.bias = TensorView(bias, DType::f32, {1});
  a.y = TensorView(y, DType::f32, {1, 1, 2, 2});
  set_reference_kernels(true);
  conv2d_forward(a);
  for (float v : y) EXPECT_EQ(v, -3.5f);  // x[i][j] - x[i+1][j+1] + 0.5
  const float dy[4] = {1, 1, 1, 1};
  float dx[9] = {}, dw[4] = {}, db[1] = {};
  Conv2dBackwardDataArgs b;
  b.dy = TensorView(dy, DType::f32, {1, 1, 2, 2});
  b.w = a.w;
  b.dx = TensorView(dx, DType::f32, {1, 1, 3, 3});
  conv2d_backward_data(b);
  const float want_dx[9] = {1, 1, 0, 1, 0, -1, 0, -1, -1};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(dx[i], want_dx[i]) << i;
  Conv2dBackwardWeightArgs c;
  c.dy = b.dy;
  c.x = a.x;
  c.dw = TensorView(dw, DType::f32, {1, 1, 2, 2});
  c.dbias = TensorView(db, DType::f32, {1});
  conv2d_backward_weight(c);
  const float want_dw[4] = {12, 16, 24, 28};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(dw[i], want_dw[i]) << i;
  EXPECT_EQ(db[0], 4.0f);
  set_reference_kernels(false);
}

// alt = the convolution of the operands rounded to bf16 (fp32 accumulation): the f16 call in alt
// mode gives the bits of the f32 call on the bf16-rounded values, rounded to f16 (the reference:
// within that second rounding).
TEST(Conv2dModes, AltEqualsTheBf16RoundedConvolution) {
  std::mt19937_64 rng(testing::fresh_seed());
  const Shape s{2, 16, 6, 6, 8, 3, 3, 1, 1, 1, 1};
  const std::int64_t p = 6, q = 6;
  Buffer x = random_buffer(rng, DType::f16, s.n * s.c * s.h * s.w);
  Buffer w = random_buffer(rng, DType::f16, s.k * s.c * 9);
  Buffer xr(DType::f32, x.size()), wr(DType::f32, w.size());
  const auto bf16 = [](double v) {
    Buffer b(DType::bf16, 1);
    b.set(0, v);
    return b.get(0);
  };
  for (std::int64_t i = 0; i < x.size(); ++i) xr.set(i, bf16(x.get(i)));
  for (std::int64_t i = 0; i < w.size(); ++i) wr.set(i, bf16(w.get(i)));
  for (const ops::Conv2dEntry& entry : list_of(ops::Conv2dPass::forward)) {
    SCOPED_TRACE(entry.name);
    Buffer y16(DType::f16, s.n * s.k * p * q), y32(DType::f32, s.n * s.k * p * q);
    Conv2dForwardArgs a;
    a.x = act_view(x, ConvLayout::nhwc, s.n, s.c, s.h, s.w);
    a.w = filt_view(w, ConvLayout::nhwc, s.k, s.c, 3, 3);
    a.y = act_view(y16, ConvLayout::nhwc, s.n, s.k, p, q);
    a.params = params_of(s, ConvLayout::nhwc, Fp16Mode::alt);
    if (ops::decline_reason(entry, ops::validate_conv2d(a)) != nullptr) continue;  // e.g. the 1x1 entry
    ops::Conv2dCounters c;
    entry.run(ops::validate_conv2d(a), c);
    a.x = act_view(xr, ConvLayout::nhwc, s.n, s.c, s.h, s.w);
    a.w = filt_view(wr, ConvLayout::nhwc, s.k, s.c, 3, 3);
    a.y = act_view(y32, ConvLayout::nhwc, s.n, s.k, p, q);
    entry.run(ops::validate_conv2d(a), c);
    for (std::int64_t i = 0; i < y16.size(); ++i) {
      Buffer r(DType::f16, 1);
      r.set(0, y32.get(i));
      if (&entry != &list_of(ops::Conv2dPass::forward).back()) {
        ASSERT_EQ(y16.get(i), r.get(0)) << i;  // fp32 sums: the same sum, rounded once to f16 on both sides
      } else {  // the reference rounds its double sum once to each dtype: f32 then f16 may round twice
        ASSERT_LE(std::fabs(y16.get(i) - y32.get(i)), 0x1p-11 * std::fabs(y32.get(i)) * (1 + 0x1p-20) + 0x1p-25) << i;
      }
    }
  }
}

// Every fast entry gives the same bits for 1, 2 and 3 threads: the direct kernel on a 3x3
// grouped convolution, the GEMM engines on a 1x1 one.
TEST(Conv2dEntries, BitsIndependentOfTheThreadCount) {
  std::mt19937_64 rng(testing::fresh_seed());
  for (const Shape& s : {Shape{3, 12, 9, 7, 10, 3, 3, 2, 1, 1, 2}, Shape{4, 40, 6, 6, 36, 1, 1, 1, 0, 1, 1}})
    for (ops::Conv2dPass pass :
         {ops::Conv2dPass::forward, ops::Conv2dPass::backward_data, ops::Conv2dPass::backward_weight}) {
      const Operands base = random_operands(rng, s, DType::bf16, DType::f32);
      std::vector<Operands> runs;
      for (int threads : {1, 2, 3}) {
        testing::ThreadsScope scope(threads);
        Operands o = base;
        const ops::Conv2dProblem problem =
            problem_of(pass, o, s, ConvLayout::nhwc, DType::bf16, Fp16Mode::exact, true, false, DType::f32);
        const ops::Conv2dEntry& entry = ops::select_kernel(list_of(pass), problem);
        SCOPED_TRACE(entry.name);
        EXPECT_NE(&entry, &list_of(pass).back());  // a fast entry, not the reference
        ops::Conv2dCounters c;
        entry.run(problem, c);
        runs.push_back(o);
      }
      for (std::size_t r = 1; r < runs.size(); ++r) {
        const auto a = outputs(pass, runs[0]), b = outputs(pass, runs[r]);
        for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i]->bytes, b[i]->bytes) << pass_name(pass);
      }
    }
}

// Bad input: the error names the function and the argument, and nothing is written.
TEST(Conv2dErrors, NameTheArgumentAndWriteNothing) {
  std::vector<float> x(2 * 4 * 5 * 5, 1.0f), w(6 * 2 * 3 * 3, 1.0f), y(2 * 6 * 5 * 5, 7.0f), bias(6, 0.0f);
  const std::vector<float> y0 = y;
  Conv2dForwardArgs a;
  a.x = TensorView(x.data(), DType::f32, {2, 4, 5, 5});
  a.w = TensorView(w.data(), DType::f32, {6, 2, 3, 3});
  a.y = TensorView(y.data(), DType::f32, {2, 6, 5, 5});
  a.bias = TensorView(bias.data(), DType::f32, {6});
  a.params.pad_h = a.params.pad_w = 1;
  a.params.groups = 2;
  EXPECT_EQ(conv2d_check(a), "");
  const auto expect_error = [&](Conv2dForwardArgs bad, const std::string& part) {
    const std::string msg = conv2d_check(bad);
    EXPECT_NE(msg.find("conv2d_forward"), std::string::npos) << msg;
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
    EXPECT_THROW(conv2d_forward(bad), Error);
    EXPECT_EQ(y, y0);
  };
  Conv2dForwardArgs bad = a;
  bad.params.groups = 3;
  expect_error(bad, "params.groups (3) must divide");
  bad = a;
  bad.params.stride_h = 0;
  expect_error(bad, "params.stride_h");
  bad = a;
  bad.y = TensorView(y.data(), DType::f32, {2, 6, 4, 5});
  expect_error(bad, "y must have the output shape of x and w [2, 6, 5, 5], but got [2, 6, 4, 5]");
  bad = a;
  bad.w = TensorView(w.data(), DType::f32, {6, 4, 3, 3});
  expect_error(bad, "w must have 2 input channels per group");
  bad = a;
  bad.bias = TensorView(bias.data(), DType::f32, {5});
  expect_error(bad, "bias must have shape (one value per output channel of w) [6], but got [5]");
  bad = a;
  bad.w = TensorView(w.data(), DType::bf16, {6, 2, 3, 3});
  expect_error(bad, "w dtype must equal x's dtype (f32), but got bf16");
  bad = a;
  bad.y = TensorView(x.data(), DType::f32, {2, 6, 5, 5});  // overlaps x
  expect_error(bad, "must not overlap");
  bad = a;
  bad.params.pad_h = bad.params.pad_w = 0;
  bad.params.dilation_h = 3;
  expect_error(bad, "must fit");
  bad = a;
  bad.x = TensorView(x.data(), DType::f32, {2, 4, 25});
  expect_error(bad, "x must have rank 4");
  // The backward calls too.
  Conv2dBackwardDataArgs b;
  b.dy = TensorView(y.data(), DType::f32, {2, 6, 5, 5});
  b.w = a.w;
  b.dx = TensorView(x.data(), DType::f32, {2, 4, 5, 4});
  b.params = a.params;
  EXPECT_NE(
      conv2d_check(b).find("dy must have the forward's output shape for dx and w [2, 6, 5, 4], but got [2, 6, 5, 5]"),
      std::string::npos)
      << conv2d_check(b);
  Conv2dBackwardWeightArgs c;
  c.dy = b.dy;
  c.dw = TensorView(w.data(), DType::f32, {6, 2, 3, 3});
  c.params = a.params;
  EXPECT_NE(conv2d_check(c).find("x must be given"), std::string::npos) << conv2d_check(c);
  EXPECT_EQ(conv2d_descriptor_check(a), "");
}

TEST(Conv2dQueries, KernelNameAndStatuses) {
  std::vector<float> x(1 * 3 * 4 * 4), w(2 * 3 * 1 * 1), y(1 * 2 * 4 * 4);
  Conv2dForwardArgs a;
  a.x = TensorView(x.data(), DType::f32, {1, 3, 4, 4});
  a.w = TensorView(w.data(), DType::f32, {2, 3, 1, 1});
  a.y = TensorView(y.data(), DType::f32, {1, 2, 4, 4});
  const auto st = conv2d_kernel_statuses(a);
  ASSERT_GE(st.size(), 2u);
  EXPECT_EQ(st.back().name, "conv2d_fwd_reference");
  int selected = 0;
  for (const KernelStatus& k : st)
    if (k.selected) {
      ++selected;
      EXPECT_EQ(k.name, conv2d_kernel_name(a));
    }
  EXPECT_EQ(selected, 1);
  set_reference_kernels(true);
  EXPECT_STREQ(conv2d_kernel_name(a), "conv2d_fwd_reference");
  set_reference_kernels(false);
  Conv2dReport report;
  conv2d_forward(a, &report);
  EXPECT_STREQ(report.kernel, conv2d_kernel_name(a));
  EXPECT_FALSE(report.fp16);
  EXPECT_STREQ(conv2d_kernel_name(a), "conv2d_fwd_1x1_gemm");  // 1x1, stride 1: the GEMM engines
  std::vector<float> y2(2 * 6 * 4);
  a.params.pad_h = 1;
  a.y = TensorView(y2.data(), DType::f32, {1, 2, 6, 4});
  EXPECT_STREQ(conv2d_kernel_name(a), "conv2d_fwd_direct_f32acc");
  EXPECT_EQ(conv2d_kernel_statuses(a).front().declined, "only stride 1 without padding");
}

// The convolution's policy: per pass by default (forward original, backward alt), its own
// choice, independent of the GEMM's; counters per mode.
TEST(Conv2dPolicy, OwnChoiceIndependentOfTheGemmsAndCounted) {
  std::vector<std::uint16_t> x(1 * 8 * 4 * 4, 0x0001), w(4 * 8, 0x3c00), y(1 * 4 * 4 * 4), dx(x.size());
  Conv2dForwardArgs a;
  a.x = TensorView(x.data(), DType::f16, {1, 8, 4, 4});
  a.w = TensorView(w.data(), DType::f16, {4, 8, 1, 1});
  a.y = TensorView(y.data(), DType::f16, {1, 4, 4, 4});
  clear_fp16_device_model();
  set_fp16_device_model(Fp16DeviceModel::mi200);
  clear_conv_fp16_alt_impl();
  set_conv_fp16_alt_impl(AltImplChoice::per_pass);
  set_gemm_fp16_alt_impl(AltImplChoice::alternate);
  reset_conv2d_fp16_counters();
  Conv2dReport r;
  conv2d_forward_with_policy(a, &r);
  EXPECT_EQ(r.fp16_mode, Fp16Mode::flush);  // forward: the model's original mode, whatever the GEMM's choice
  EXPECT_EQ(r.fp16_subnormal_inputs, static_cast<std::int64_t>(x.size()));
  EXPECT_EQ(y[0], 0);  // 8 subnormals flushed
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
  Conv2dBackwardDataArgs b;
  b.dy = a.y;
  b.w = a.w;
  b.dx = TensorView(dx.data(), DType::f16, {1, 8, 4, 4});
  {
    BackwardPassGuard guard;
    conv2d_backward_data_with_policy(b, &r);
    EXPECT_EQ(r.fp16_mode, Fp16Mode::alt);  // backward: alt
    set_conv_fp16_alt_impl(AltImplChoice::original);
    conv2d_backward_data_with_policy(b, &r);
    EXPECT_EQ(r.fp16_mode, Fp16Mode::flush);  // conv original while the GEMM stays alternate
    EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::alt);
  }
  set_gemm_fp16_alt_impl(AltImplChoice::original);
  set_conv_fp16_alt_impl(AltImplChoice::alternate);
  conv2d_forward_with_policy(a, &r);
  EXPECT_EQ(r.fp16_mode, Fp16Mode::alt);  // conv alt everywhere while the GEMM is original
  EXPECT_EQ(gemm_fp16_mode(), Fp16Mode::flush);
  const Conv2dFp16Counters c = conv2d_fp16_counters();
  EXPECT_EQ(c.calls(), 4);
  EXPECT_EQ(c.flush.calls, 2);
  EXPECT_EQ(c.alt.calls, 2);
  EXPECT_EQ(c.flush.subnormal_inputs, static_cast<std::int64_t>(x.size()));
  // f32 calls leave the policy and the counters alone.
  std::vector<float> xf(8 * 16), wf(32), yf(64);
  Conv2dForwardArgs f;
  f.x = TensorView(xf.data(), DType::f32, {1, 8, 4, 4});
  f.w = TensorView(wf.data(), DType::f32, {4, 8, 1, 1});
  f.y = TensorView(yf.data(), DType::f32, {1, 4, 4, 4});
  conv2d_forward_with_policy(f, &r);
  EXPECT_EQ(conv2d_fp16_counters().calls(), 4);
  clear_conv_fp16_alt_impl();
  clear_gemm_fp16_alt_impl();
  clear_fp16_device_model();
  reset_conv2d_fp16_counters();
}

}  // namespace
}  // namespace ampkit
