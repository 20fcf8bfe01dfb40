// Bias gradients under the fp16 modes (docs/DESIGN.md, "Bias gradients under the fp16 modes"):
// BGRADA / BGRADB and the Linear layer's db sum the operand as given (fp16 widened exactly, fp32
// sums), on every kernel-list entry and every ISA, while D keeps the mode's semantics. The inputs
// are built so that the old rule (summing the operand as the mode sees it) misses the bound:
// rows of fp16 subnormals for flush, values bf16 cannot represent for alt.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ampkit/layers/linear.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

using gemm_test::GemmBuffers;
using gemm_test::GemmCase;

constexpr double kU32 = 0x1p-24;

// The summed operand's element (r, kk): row r of op(A) (BGRADA) or column r of op(B) (BGRADB).
double summed_element(const GemmBuffers& t, std::int64_t r, std::int64_t kk) {
  const GemmCase& c = t.cfg;
  if (c.kind == Epilogue::BGRADA) return t.a.get(c.op_a == Op::N ? r + kk * t.lda : kk + r * t.lda);
  return t.b.get(c.op_b == Op::N ? kk + r * t.ldb : r + kk * t.ldb);
}

void set_summed_element(GemmBuffers& t, std::int64_t r, std::int64_t kk, double v) {
  const GemmCase& c = t.cfg;
  if (c.kind == Epilogue::BGRADA)
    t.a.set(c.op_a == Op::N ? r + kk * t.lda : kk + r * t.lda, v);
  else
    t.b.set(c.op_b == Op::N ? kk + r * t.ldb : r + kk * t.ldb, v);
}

// Row 0 of the summed operand: all fp16 subnormals (+m * 2^-24, the flush case); row 1: values
// 1 + (8j + 6) 2^-10, each rounded up by 2^-9 in bf16 (the alt case: rounding them shifts the
// sum by k 2^-9, far more than the fp32 summation bound).
void plant(GemmBuffers& t, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> mantissa(1, 1023), low_bits(1, 3);
  for (std::int64_t kk = 0; kk < t.cfg.k; ++kk) {
    set_summed_element(t, 0, kk, std::ldexp(mantissa(rng), -24));
    set_summed_element(t, 1, kk, 1.0 + std::ldexp(8 * low_bits(rng) - 2, -10));  // rounds up by 2^-9 in bf16
  }
}

// The old rule's sum of row r (the operand as the mode sees it), to show the inputs discriminate.
double mode_sum(const GemmBuffers& t, std::int64_t r) {
  double s = 0.0;
  for (std::int64_t kk = 0; kk < t.cfg.k; ++kk)
    s += gemm_test::mode_value(summed_element(t, r, kk), DType::f16, t.cfg.mode);
  return s;
}

void expect_sums_as_given(const GemmBuffers& in, const GemmBuffers& got, const char* kernel) {
  const GemmCase& c = in.cfg;
  const std::int64_t length = c.kind == Epilogue::BGRADA ? c.m : c.n;
  for (std::int64_t r = 0; r < length; ++r) {
    double want = 0.0, mag = 0.0;
    for (std::int64_t kk = 0; kk < c.k; ++kk) {
      want += summed_element(in, r, kk);
      mag += std::fabs(summed_element(in, r, kk));
    }
    // fp32 sums over blocks of at most 256, combined in double, one rounding to f32.
    const double tol = error_bounds::gemm_bias_grad_of_operand(c.k, mag);
    const double g = got.bias_grad.get(r);
    EXPECT_LE(std::fabs(g - want), tol) << kernel << " bias_grad(" << r << ") = " << g << ", as-given sum " << want
                                        << "\n  " << c.describe();
    if (r < 2 && c.mode != Fp16Mode::exact && (r == 0) == (c.mode == Fp16Mode::flush)) {
      EXPECT_GT(std::fabs(mode_sum(in, r) - want), tol) << "the planted row does not discriminate";
    }
  }
}

TEST(GemmBiasGradModes, EveryKernelSumsTheOperandAsGivenInEveryMode) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  int ran = 0;
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (const ops::GemmKernel& kernel : cpu::gemm_kernels()) {
      for (Fp16Mode mode : {Fp16Mode::exact, Fp16Mode::alt, Fp16Mode::flush}) {
        for (Epilogue kind : {Epilogue::BGRADA, Epilogue::BGRADB}) {
          // A blocked shape and a skinny one (min(m, n) <= gemm_skinny_max); k past one block.
          for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{37, 29}, {5, 3}}) {
            GemmCase c;
            c.m = m, c.n = n, c.k = 300, c.op_a = Op::T, c.op_b = Op::N;
            c.a = c.b = DType::f16, c.d = DType::f16, c.bias_dtype = DType::f32;
            c.kind = kind, c.mode = mode;
            GemmBuffers in = gemm_test::make_buffers(c, rng);
            if (nullptr != ops::decline_reason(kernel, ops::make_gemm_problem(in.args()))) continue;
            plant(in, rng);
            GemmBuffers got = in, want = in;
            ops::GemmCounters counters;
            kernel.run(ops::make_gemm_problem(got.args()), counters);
            expect_sums_as_given(in, got, kernel.name);
            gemm_test::run_reference(want);  // D under the mode: the reference's semantics
            gemm_test::expect_close(in, got, want);
            ++ran;
          }
        }
      }
    }
  }
  EXPECT_GE(ran, 12);  // at least the reference and one fast kernel, both shapes, all modes
}

// The Linear layer's db (the dW GEMM's BGRADB) under the default backward policy (alt) and the
// MI200 model (flush): the fp32 sum of dy as given; dw still shows the mode.
TEST(GemmBiasGradModes, LinearDbIsTheSumOfDyAsGiven) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> mantissa(1, 1023), low_bits(1, 3);
  std::normal_distribution<double> normal;
  constexpr std::int64_t batch = 96, in_features = 24, out_features = 5;
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (Fp16Mode mode : {Fp16Mode::alt, Fp16Mode::flush}) {
      testing::Buffer dy(DType::f16, batch * out_features), x(DType::f16, batch * in_features);
      for (std::int64_t t = 0; t < batch; ++t) {
        dy.set(t * out_features + 0, std::ldexp(mantissa(rng), -24));                // subnormal
        dy.set(t * out_features + 1, 1.0 + std::ldexp(8 * low_bits(rng) - 2, -10));  // not bf16
        for (std::int64_t o = 2; o < out_features; ++o) dy.set(t * out_features + o, normal(rng));
      }
      for (std::int64_t i = 0; i < x.size(); ++i) x.set(i, normal(rng));
      std::vector<float> dw(in_features * out_features, -7.0f), db(out_features, -7.0f);
      LinearBackwardArgs args;
      args.dy = TensorView(dy.data(), DType::f16, {batch, out_features});
      args.x = TensorView(x.data(), DType::f16, {batch, in_features});
      args.dw = TensorView(dw.data(), DType::f32, {out_features, in_features});
      args.db = TensorView(db.data(), DType::f32, {out_features});
      args.fp16_mode = mode;
      linear_backward(args);
      for (std::int64_t o = 0; o < out_features; ++o) {
        double want = 0.0, mag = 0.0;
        for (std::int64_t t = 0; t < batch; ++t)
          want += dy.get(t * out_features + o), mag += std::fabs(dy.get(t * out_features + o));
        EXPECT_LE(std::fabs(db[o] - want), (batch + 2.0) * kU32 * mag)
            << "db[" << o << "] mode " << static_cast<int>(mode);
      }
      // dw row 0 (the subnormal dy column) is all zero under flush: the product keeps the mode.
      if (mode == Fp16Mode::flush) {
        for (std::int64_t i = 0; i < in_features; ++i) EXPECT_EQ(dw[i], 0.0f);
      }
    }
  }
}

}  // namespace
}  // namespace ampkit
