// Accuracy of the fp32 epilogue math (src/cpu/math/gelu_math.hpp) against double-precision std::
// math: exp within 2 ulp; gelu within 8 * 2^-24 * |x|; gelu' within 8 * 2^-24 (|gelu'| <= 1.13).
// The bounds are the ones docs/NUMERICS.md states (measured maxima: 1.7, 3.5 and 4.3).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ampkit/core/float16.hpp"
#include "cpu/math/fp16_mode_math.hpp"
#include "cpu/math/gelu_math.hpp"

namespace ampkit {
namespace {

namespace gm = cpu::gemm_math;
constexpr double kPi = 3.14159265358979323846;
constexpr double kU = 0x1p-24;

TEST(GemmMath, ExpIsWithinTwoUlp) {
  for (double x = -103.0; x <= 88.5; x += 0.00731) {
    const float xf = static_cast<float>(x);
    const double want = std::exp(static_cast<double>(xf));
    const double tol = want >= 0x1p-126 ? 2.0 * kU * want : 0x1p-149;  // subnormal results: 1 step
    ASSERT_NEAR(gm::exp_f32(xf), want, tol) << xf;
  }
  EXPECT_EQ(gm::exp_f32(100.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(gm::exp_f32(-200.0f), 0.0f);
  EXPECT_TRUE(std::isnan(gm::exp_f32(std::nanf(""))));
}

TEST(GemmMath, GeluAndItsDerivativeAreWithinAFewUlp) {
  for (double x = -30.0; x <= 30.0; x += 0.000917) {
    const float xf = static_cast<float>(x);
    const double xd = xf;
    const double u = std::sqrt(2 / kPi) * (xd + 0.044715 * xd * xd * xd);
    const double t = std::tanh(u);
    const double phi = 0.5 * std::erfc(-xd / std::sqrt(2.0));
    const double gelu_tanh = 0.5 * xd * (1 + t), gelu_erf = xd * phi;
    const double dgelu_tanh =
        0.5 * (1 + t) + 0.5 * xd * (1 - t * t) * std::sqrt(2 / kPi) * (1 + 3 * 0.044715 * xd * xd);
    const double dgelu_erf = phi + xd * std::exp(-0.5 * xd * xd) / std::sqrt(2 * kPi);
    ASSERT_NEAR(gm::gelu_tanh(xf), gelu_tanh, 8 * kU * std::fabs(xd)) << xf;
    ASSERT_NEAR(gm::gelu_erf(xf), gelu_erf, 8 * kU * std::fabs(xd)) << xf;
    ASSERT_NEAR(gm::gelu_tanh_derivative(xf), dgelu_tanh, 8 * kU) << xf;
    ASSERT_NEAR(gm::gelu_erf_derivative(xf), dgelu_erf, 8 * kU) << xf;
  }
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(gm::gelu_tanh(1e30f), 1e30f);
  EXPECT_EQ(gm::gelu_tanh(-1e30f), 0.0f);
  EXPECT_EQ(gm::gelu_erf(-1e30f), 0.0f);
  EXPECT_EQ(gm::gelu_tanh_derivative(1e30f), 1.0f);
  EXPECT_EQ(gm::gelu_tanh_derivative(-1e30f), 0.0f);
  EXPECT_EQ(gm::gelu_tanh(inf), inf);
  EXPECT_TRUE(std::isnan(gm::gelu_tanh(std::nanf(""))));
  EXPECT_TRUE(std::isnan(gm::gelu_erf_derivative(std::nanf(""))));
}

TEST(GemmMath, Fp16ModeHelpers) {
  EXPECT_TRUE(gm::is_f16_subnormal_input(0x1p-24f));
  EXPECT_TRUE(gm::is_f16_subnormal_input(-0x1.ff8p-15f));
  EXPECT_FALSE(gm::is_f16_subnormal_input(0x1p-14f));
  EXPECT_FALSE(gm::is_f16_subnormal_input(-0.0f));
  // Exactly the values float_to_half_bits turns into non-zero subnormals.
  for (float x = 0x1p-27f; x < 0x1p-13f; x *= 1.0001f) {
    const std::uint16_t h = float_to_half_bits(x);
    const bool subnormal = (h & 0x7c00) == 0 && (h & 0x3ff) != 0;
    ASSERT_EQ(gm::rounds_to_f16_subnormal(x), subnormal) << x;
    ASSERT_EQ(gm::rounds_to_f16_subnormal(-x), subnormal) << x;
  }
  EXPECT_FALSE(gm::rounds_to_f16_subnormal(0x1p-25f));      // tie to 0
  EXPECT_FALSE(gm::rounds_to_f16_subnormal(0x1.ffcp-15f));  // tie to 2^-14
  EXPECT_EQ(gm::round_to_bf16(1.0f + 0x1p-8f), 1.0f);       // tie to even
  EXPECT_EQ(gm::round_to_bf16(1.0f + 0x1.8p-8f), 1.0f + 0x1p-7f);
  EXPECT_TRUE(std::isnan(gm::round_to_bf16(std::nanf(""))));
}

}  // namespace
}  // namespace ampkit
