// The tanh GELU and GELU' of the GEMM epilogue (the exp2 form, src/cpu/math/gelu_exp2_form.hpp)
// through every engine of the kernel list that runs here, against double: the bounds of
// docs/NUMERICS.md ("GELU", derived there), |gelu - exact| <= 4 * 2^-24 * |x| and |gelu' - exact|
// <= 10 * 2^-24, over [-30, 30]; and every engine gives the same bits (one formula, AVX2 and
// AVX-512 alike).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>
#include <vector>

#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

// GELU_BIAS with A = 0 makes x = bias (any fp32 value); DGELU with A = B = 1 makes D = gelu'(aux).
std::vector<float> run_gelu(const ops::GemmKernel& kernel, std::vector<float> x, bool backward) {
  const auto m = static_cast<std::int64_t>(x.size());
  std::vector<std::uint16_t> a(x.size(), backward ? 0x3f80 : 0), b(1, 0x3f80);  // bf16 1.0 or 0
  std::vector<float> d(x.size(), std::nanf(""));
  GemmArgs g;
  g.m = m, g.n = 1, g.k = 1;
  g.a = a.data(), g.a_dtype = DType::bf16, g.lda = m;
  g.b = b.data(), g.b_dtype = DType::bf16, g.ldb = 1;
  g.d = d.data(), g.d_dtype = DType::f32, g.ldd = m;
  g.epilogue.kind = backward ? Epilogue::DGELU : Epilogue::GELU_BIAS;
  g.epilogue.gelu = GeluVariant::tanh;
  if (backward) {
    g.epilogue.aux = x.data(), g.epilogue.aux_dtype = DType::f32, g.epilogue.aux_ld = m;
  } else {
    g.epilogue.bias = x.data(), g.epilogue.bias_dtype = DType::f32;
  }
  ops::GemmCounters counters;
  kernel.run(ops::make_gemm_problem(g), counters);
  return d;
}

TEST(GemmGeluEpilogue, TanhGeluIsWithinAFewUlpAndTheSameInEveryEngine) {
  constexpr double kPi = 3.14159265358979323846, kU = 0x1p-24;
  std::vector<float> x;
  for (double v = -30.0; v <= 30.0; v += 0.000917) x.push_back(static_cast<float>(v));
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 20.0f, -20.0f, 9.5f, -9.5f}) x.push_back(v);
  int engines = 0;
  for (const bool backward : {false, true}) {
    std::vector<float> first;
    std::string first_name;
    for (const ops::GemmKernel& kernel : cpu::gemm_kernels()) {
      if (std::string(kernel.name) == "gemm_reference" || ops::kernel_unavailable_reason(kernel.needs) != nullptr)
        continue;
      SCOPED_TRACE(kernel.name);
      const std::vector<float> d = run_gelu(kernel, x, backward);
      engines += backward ? 0 : 1;
      double worst = 0.0;
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double xd = x[i];
        const double t = std::tanh(std::sqrt(2 / kPi) * (xd + 0.044715 * xd * xd * xd));
        const double want =
            backward ? 0.5 * (1 + t) + 0.5 * xd * (1 - t * t) * std::sqrt(2 / kPi) * (1 + 3 * 0.044715 * xd * xd)
                     : 0.5 * xd * (1 + t);
        const double scale = backward ? 1.0 : std::max(std::fabs(xd), 1e-300);  // x = 0: exactly 0
        const double err = std::fabs(static_cast<double>(d[i]) - want) / (kU * scale);
        ASSERT_LE(err, backward ? 10.0 : 4.0)
            << (backward ? "gelu'(" : "gelu(") << x[i] << ") = " << d[i] << ", exact " << want;
        worst = std::max(worst, err);
      }
      RecordProperty(std::string(kernel.name) + (backward ? ".dgelu_worst_ulps_of_1" : ".gelu_worst_ulps_of_x"),
                     std::to_string(worst));
      if (first.empty()) {
        first = d, first_name = kernel.name;
      } else {
        for (std::size_t i = 0; i < x.size(); ++i)
          ASSERT_EQ(std::bit_cast<std::uint32_t>(d[i]), std::bit_cast<std::uint32_t>(first[i]))
              << (backward ? "gelu'(" : "gelu(") << x[i] << "): " << d[i] << " here, " << first[i] << " in "
              << first_name;
      }
    }
  }
  if (engines == 0) GTEST_SKIP() << "no fast GEMM engine runs here (ISA cap)";
}

}  // namespace
}  // namespace ampkit
