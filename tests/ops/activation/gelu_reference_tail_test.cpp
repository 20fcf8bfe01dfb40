// The tanh GELU of the two references (gemm_reference's epilogue, which AMPKIT_ISA=ref runs, and
// gelu_reference, the last entry of gelu_kernels()) on the negative tail x in [-12, -5], where
// 0.5 x (1 + tanh u) cancels: each output, f32, must be the exact value rounded once — relative
// error <= 2^-24 (plus half the f32 subnormal spacing, 2^-150, where the value underflows).
// Exact: the same function as x / (1 + e^(-2u)) (0.5 (1 + tanh u) = 1 / (1 + e^(-2u))) and its
// derivative, in long double; e^(-2u) is large there, nothing cancels.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ampkit/ops/gemm.hpp"
#include "cpu/activation/activation_kernels.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "ops/elementwise/op_test_support.hpp"

namespace ampkit {
namespace {

using namespace ops_testing;

constexpr long double kSqrt2OverPi = 0.797884560802865355879892119868763737L;
constexpr long double kCubic = 0.044715L;

long double exact_gelu(long double x) {
  const long double u = kSqrt2OverPi * (x + kCubic * x * x * x);
  return x / (1.0L + std::exp(-2.0L * u));
}

long double exact_gelu_derivative(long double x) {
  const long double u = kSqrt2OverPi * (x + kCubic * x * x * x);
  const long double du = kSqrt2OverPi * (1.0L + 3.0L * kCubic * x * x);
  const long double e = std::exp(-2.0L * u);
  const long double s = 1.0L / (1.0L + e);
  return s + 2.0L * x * s * (e * s) * du;  // 1 - s = e s
}

// x: 7001 f32 points evenly over [-12, -5].
std::vector<float> tail_points() {
  std::vector<float> x(7001);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(-12.0 + 7.0 * static_cast<double>(i) / 7000.0);
  return x;
}

// Counts (and reports the first few) outputs off the exact value by more than one rounding.
int count_off(const char* what, const std::vector<float>& x, const std::vector<float>& got, bool derivative) {
  int off = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double exact = derivative ? exact_gelu_derivative(x[i]) : exact_gelu(x[i]);
    const long double err = std::fabs(static_cast<long double>(got[i]) - exact);
    if (err <= 0x1p-24L * std::fabs(exact) + 0x1p-150L) continue;
    if (++off <= 5)
      ADD_FAILURE() << what << ": x = " << x[i] << " gave " << got[i] << ", exact " << static_cast<double>(exact)
                    << " (relative error " << static_cast<double>(err / std::fabs(exact)) << ")";
  }
  return off;
}

TEST(GeluReferenceTail, TheOpReferenceKeepsRelativeAccuracyOnTheNegativeTail) {
  const std::vector<float> x = tail_points();
  const std::vector<float> ones(x.size(), 1.0f);
  const auto n = static_cast<std::int64_t>(x.size());
  for (bool backward : {false, true}) {
    std::vector<float> out(x.size(), 1.0f);
    ops::GeluProblem p{1,           n,          backward, GeluVariant::tanh, x.data(),   DType::f32, n,
                       ones.data(), DType::f32, n,        out.data(),        DType::f32, n};
    if (!backward) p.dy = nullptr;
    cpu::gelu_reference(p);
    EXPECT_EQ(count_off(backward ? "gelu_reference backward" : "gelu_reference forward", x, out, backward), 0);
  }
}

TEST(GeluReferenceTail, TheGemmReferenceEpilogueKeepsRelativeAccuracyOnTheNegativeTail) {
  // D [m, 1] = act(A [m, 1] * B [1, 1]) with B = 1: GELU gives gelu(x); DGELU with A = 1 and
  // aux = x gives gelu'(x).
  const std::vector<float> x = tail_points();
  const std::vector<float> ones(x.size(), 1.0f);
  const float b = 1.0f;
  const auto m = static_cast<std::int64_t>(x.size());
  for (bool backward : {false, true}) {
    std::vector<float> d(x.size(), 1.0f);
    GemmArgs a;
    a.m = m, a.n = 1, a.k = 1;
    a.a = backward ? ones.data() : x.data(), a.lda = m;
    a.b = &b, a.ldb = 1;
    a.d = d.data(), a.ldd = m;
    a.epilogue.kind = backward ? Epilogue::DGELU : Epilogue::GELU;
    a.epilogue.gelu = GeluVariant::tanh;
    if (backward) {
      a.epilogue.aux = const_cast<float*>(x.data());
      a.epilogue.aux_dtype = DType::f32;
      a.epilogue.aux_ld = m;
    }
    const ops::GemmProblem p = ops::make_gemm_problem(a);
    ops::GemmCounters counters;
    cpu::gemm_reference(p, counters);
    EXPECT_EQ(count_off(backward ? "gemm_reference DGELU" : "gemm_reference GELU", x, d, backward), 0);
  }
}

}  // namespace
}  // namespace ampkit
