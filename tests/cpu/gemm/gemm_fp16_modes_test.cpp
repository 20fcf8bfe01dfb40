// The fp16 modes of the GEMM on every ISA: alt equals the computation on bf16-rounded operands;
// flush zeroes exactly the subnormal inputs and outputs (and counts them); a product whose exact
// result is an fp16 subnormal survives in exact and alt and becomes zero in flush. Bias gradients
// of BGRADA / BGRADB sum the operands as given in every mode (gemm_bias_grad_modes_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

using gemm_test::GemmBuffers;
using gemm_test::GemmCase;

// Every layout of both operands (the alt packing rounds f16 to bf16 in blocks of 256 k along the
// operand's own orientation, so k = 600 crosses blocks and ends in a partial k step), with f16
// subnormals, the smallest normal and 11-bit values planted: the same bits as bf16-rounded operands given
// as bf16, the same subnormal count as the exact mode, and the reference's tolerance.
TEST(GemmFp16Modes, AltEqualsBf16RoundedOperands) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> which(0, 15), mantissa(1, 1023);
  struct Shape {
    std::int64_t m, n, k;
  };
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(std::string("isa ") + std::string(isa_name(isa)));
    for (const Shape& shape : {Shape{45, 38, 77}, Shape{70, 33, 600}})
      for (const Op op_a : {Op::N, Op::T})
        for (const Op op_b : {Op::N, Op::T})
          for (Epilogue kind : {Epilogue::DEFAULT, Epilogue::GELU_AUX_BIAS, Epilogue::DGELU_BGRAD, Epilogue::BGRADB}) {
            if (shape.k > 100 && kind != Epilogue::DEFAULT) continue;  // the packing is what differs
            GemmCase c;
            c.m = shape.m, c.n = shape.n, c.k = shape.k, c.op_a = op_a, c.op_b = op_b;
            c.a = c.b = DType::f16, c.d = DType::f16, c.bias_dtype = c.aux_dtype = DType::f16;
            c.kind = kind, c.mode = Fp16Mode::alt;
            GemmBuffers in = gemm_test::make_buffers(c, rng);
            std::int64_t planted = 0;
            for (testing::Buffer* op : {&in.a, &in.b})
              for (std::int64_t i = 0; i < op->size(); ++i) {
                const int w = which(rng);
                if (w == 0) {
                  op->set(i, std::ldexp(static_cast<double>(mantissa(rng)), -24) * (i % 2 == 0 ? 1 : -1));
                  ++planted;
                } else if (w == 1) {
                  op->set(i, i % 2 == 0 ? 40.0625 : -0.00006103515625);  // 11 significant bits; -2^-14
                }
              }
            // The same problem with the operands rounded to bf16 and given as bf16.
            GemmBuffers rounded = gemm_test::with_operands_as_bf16(in);
            GemmBuffers alt = in;
            GemmReport report;
            gemm(alt.args(), &report);
            EXPECT_TRUE(report.fp16);
            EXPECT_EQ(report.fp16_mode, Fp16Mode::alt);
            EXPECT_GE(report.fp16_subnormal_inputs, planted) << c.describe();
            GemmBuffers exact = in;
            exact.cfg.mode = Fp16Mode::exact;
            GemmReport exact_report;
            gemm(exact.args(), &exact_report);
            EXPECT_EQ(report.fp16_subnormal_inputs, exact_report.fp16_subnormal_inputs) << c.describe();
            gemm(rounded.args());  // same kernel family, same values: the same bits
            EXPECT_EQ(alt.d.bytes, rounded.d.bytes) << c.describe();
            EXPECT_EQ(alt.aux.bytes, rounded.aux.bytes) << c.describe();
            if (kind == Epilogue::BGRADB) {
              // The bias gradient sums B as given, not bf16-rounded: the exact mode's bits.
              EXPECT_EQ(alt.bias_grad.bytes, exact.bias_grad.bytes) << c.describe();
            } else {
              EXPECT_EQ(alt.bias_grad.bytes, rounded.bias_grad.bytes) << c.describe();  // sums of D
            }
            // And the reference on the rounded operands agrees within the usual tolerance.
            GemmBuffers want = rounded;
            gemm_test::run_reference(want);
            GemmBuffers got = alt;
            if (kind == Epilogue::BGRADB) got.bias_grad = want.bias_grad;  // checked above, as given
            gemm_test::expect_close(rounded, got, want);
          }
  }
}

TEST(GemmFp16Modes, FlushZeroesExactlyTheSubnormalInputs) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> which(0, 9), mantissa(1, 1023);
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(std::string("isa ") + std::string(isa_name(isa)));
    GemmCase c;
    c.m = 40, c.n = 30, c.k = 50, c.a = DType::f16, c.b = DType::f32, c.d = DType::f32;
    c.kind = Epilogue::BGRADA, c.mode = Fp16Mode::flush;
    GemmBuffers in = gemm_test::make_buffers(c, rng);
    // Every tenth element of A becomes a subnormal (+-m * 2^-24), scaled so it matters: B large.
    // First no accidental subnormal from the normal draw (|x| < 2^-14 happens about once in
    // 20000), then the planted ones.
    for (std::int64_t i = 0; i < in.a.size(); ++i)
      if (std::fabs(in.a.get(i)) < 0x1p-14) in.a.set(i, 0.5);
    std::int64_t subnormals = 0;
    GemmBuffers zeroed = in;
    for (std::int64_t i = 0; i < in.a.size(); ++i) {
      if (which(rng) != 0) continue;
      const double v = (which(rng) < 5 ? -1 : 1) * std::ldexp(mantissa(rng), -24);
      in.a.set(i, v);
      zeroed.a.set(i, 0.0);
      ++subnormals;
    }
    for (std::int64_t i = 0; i < in.b.size(); ++i) in.b.set(i, in.b.get(i) * 65536.0), zeroed.b.set(i, in.b.get(i));
    GemmBuffers flush = in, exact = in;
    GemmReport report;
    gemm(flush.args(), &report);
    EXPECT_EQ(report.fp16_subnormal_inputs, subnormals);
    gemm(zeroed.args());
    EXPECT_EQ(flush.d.bytes, zeroed.d.bytes);
    exact.cfg.mode = Fp16Mode::exact;
    GemmReport exact_report;
    gemm(exact.args(), &exact_report);
    EXPECT_EQ(flush.bias_grad.bytes, exact.bias_grad.bytes);    // BGRADA sums A as given
    EXPECT_EQ(exact_report.fp16_subnormal_inputs, subnormals);  // counted in every mode
    EXPECT_NE(exact.d.bytes, flush.d.bytes);                    // and they did matter
  }
}

TEST(GemmFp16Modes, SubnormalProductSurvivesExactAndAltButNotFlush) {
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(std::string("isa ") + std::string(isa_name(isa)));
    for (Fp16Mode mode : {Fp16Mode::exact, Fp16Mode::alt, Fp16Mode::flush}) {
      // 2^-7 * 2^-10 = 2^-17: both factors normal in fp16, the product an fp16 subnormal.
      // D, aux (GELU_AUX pre-activation) and bias_grad (BGRADB is not used here) are all f16.
      const half a(0x1p-7f), b(0x1p-10f);
      half d[3] = {half(1.0f), half(1.0f), half(1.0f)}, aux[3] = {half(1.0f), half(1.0f), half(1.0f)};
      GemmArgs g;
      g.m = 3, g.n = 1, g.k = 1;
      const half a3[3] = {a, a, half(1.0f)};
      g.a = a3, g.a_dtype = DType::f16, g.lda = 3;
      g.b = &b, g.b_dtype = DType::f16, g.ldb = 1;
      g.d = d, g.d_dtype = DType::f16, g.ldd = 3;
      g.epilogue.kind = Epilogue::RELU_AUX;
      g.epilogue.aux = aux, g.epilogue.aux_dtype = DType::f16, g.epilogue.aux_ld = 3;
      g.fp16_mode = mode;
      GemmReport report;
      gemm(g, &report);
      const float expected = mode == Fp16Mode::flush ? 0.0f : 0x1p-17f;
      EXPECT_EQ(static_cast<float>(d[0]), expected) << static_cast<int>(mode);
      EXPECT_EQ(static_cast<float>(aux[0]), expected) << static_cast<int>(mode);
      EXPECT_EQ(static_cast<float>(d[2]), 0x1p-10f);
      EXPECT_EQ(report.fp16_subnormal_outputs, 4);  // d[0], d[1], aux[0], aux[1]
      EXPECT_EQ(report.fp16_subnormal_inputs, 0);
    }
  }
}

TEST(GemmFp16Modes, FlushAppliesToProductsButNotToBiasGradients) {
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(std::string("isa ") + std::string(isa_name(isa)));
    for (Fp16Mode mode : {Fp16Mode::exact, Fp16Mode::alt, Fp16Mode::flush}) {
      const bool flush = mode == Fp16Mode::flush;
      // Subnormal inputs: BGRADB sums B = {2^-16, 2^-16} (fp16 subnormals) over k. The product
      // flushes them; the bias gradient, a vector-unit reduction, keeps them.
      const half a[2] = {half(1.0f), half(1.0f)}, b_sub[2] = {half(0x1p-16f), half(0x1p-16f)};
      float d[1] = {7.0f}, bias_grad[1] = {7.0f};
      GemmArgs g;
      g.m = 1, g.n = 1, g.k = 2;
      g.a = a, g.a_dtype = DType::f16, g.lda = 1;
      g.b = b_sub, g.b_dtype = DType::f16, g.ldb = 2;
      g.d = d, g.d_dtype = DType::f32, g.ldd = 1;
      g.epilogue.kind = Epilogue::BGRADB;
      g.epilogue.bias_grad = bias_grad, g.epilogue.bias_dtype = DType::f32;
      g.fp16_mode = mode;
      GemmReport report;
      gemm(g, &report);
      EXPECT_EQ(report.fp16_subnormal_inputs, 2);
      EXPECT_EQ(d[0], flush ? 0.0f : 0x1p-15f);
      EXPECT_EQ(bias_grad[0], 0x1p-15f);
      // Subnormal outputs from normal inputs: 2^-13 - (2^-13 - 2^-20) = 2^-20, into f16 D
      // (flushed under flush, and counted) and an f16 bias gradient (kept, not counted).
      const half b_cancel[2] = {half(0x1p-13f), half(-(0x1p-13f - 0x1p-20f))};
      half dh[1] = {half(7.0f)}, bias_grad_h[1] = {half(7.0f)};
      g.b = b_cancel, g.d = dh, g.d_dtype = DType::f16;
      g.epilogue.bias_grad = bias_grad_h, g.epilogue.bias_dtype = DType::f16;
      gemm(g, &report);
      EXPECT_EQ(report.fp16_subnormal_inputs, 0);
      EXPECT_EQ(report.fp16_subnormal_outputs, 1);
      EXPECT_EQ(static_cast<float>(dh[0]), flush ? 0.0f : 0x1p-20f);
      EXPECT_EQ(static_cast<float>(bias_grad_h[0]), 0x1p-20f);
    }
  }
}

}  // namespace
}  // namespace ampkit
