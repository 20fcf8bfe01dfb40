// Tests of the one rounding of a double to a dtype (src/core/element.hpp: round_to_dtype,
// store_double): against an independent nearest-even rounding in double (scale by the quantum of
// the target format, nearbyint, overflow past the largest finite), on random values of every
// magnitude, exact ties, values beside ties, subnormals, overflow, zeros, Inf and NaN.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/element.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

// x rounded to a binary format with `precision` significand bits, minimum normal exponent `emin`
// and largest finite `max_finite`, nearest even: the quantum of x's binade times nearbyint.
double round_binary(double x, int precision, int emin, double max_finite) {
  if (std::isnan(x) || std::isinf(x) || x == 0.0) return x;
  int e = std::ilogb(x);
  if (e < emin) e = emin;
  const double quantum = std::ldexp(1.0, e - (precision - 1));
  const double r = std::nearbyint(x / quantum) * quantum;
  if (std::fabs(r) > max_finite) return std::copysign(INFINITY, x);
  return r;
}

double expected_rounding(DType t, double x) {
  if (t == DType::bf16) return round_binary(x, 8, -126, 0x1.fep127);
  if (t == DType::f16) return round_binary(x, 11, -14, 65504.0);
  return round_binary(x, 24, -126, 0x1.fffffep127);
}

struct Format {
  DType dtype;
  int precision, emin, emax;
};

std::vector<double> probe_values(const Format& f, std::mt19937_64& rng) {
  std::vector<double> v = {0.0, -0.0, INFINITY, -INFINITY, 1e300, -1e300, 1e-300, -1e-300};
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(f.emin - f.precision - 2, f.emax + 1);
  for (int i = 0; i < 20000; ++i) {
    const double x = std::ldexp(mantissa(rng), exponent(rng));
    v.push_back(i % 2 ? x : -x);
  }
  // Exact ties between neighbours of the target format and the doubles beside them.
  std::uniform_int_distribution<std::int64_t> significand(0, (std::int64_t{1} << f.precision) - 1);
  for (int i = 0; i < 4000; ++i) {
    const int e = exponent(rng);
    const double q = std::ldexp(1.0, std::max(e, f.emin) - (f.precision - 1));
    const double tie = (static_cast<double>(significand(rng)) + 0.5) * q;
    for (double x : {tie, std::nextafter(tie, 0.0), std::nextafter(tie, INFINITY)}) {
      v.push_back(x);
      v.push_back(-x);
    }
  }
  return v;
}

TEST(RoundToDtype, MatchesIndependentNearestEvenRounding) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (const Format& f :
       {Format{DType::f32, 24, -126, 127}, Format{DType::bf16, 8, -126, 127}, Format{DType::f16, 11, -14, 15}}) {
    SCOPED_TRACE(dtype_name(f.dtype));
    for (double x : probe_values(f, rng)) {
      const float got = cpu::round_to_dtype(f.dtype, x);
      const float want = static_cast<float>(expected_rounding(f.dtype, x));
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << "x = " << std::hexfloat << x;
      // store_double stores the same value.
      std::uint32_t stored[1] = {0xdeadbeefu};
      cpu::store_double(stored, f.dtype, 0, x);
      const float read = cpu::load_element(stored, f.dtype, 0);
      ASSERT_EQ(std::bit_cast<std::uint32_t>(read), std::bit_cast<std::uint32_t>(want)) << "x = " << std::hexfloat << x;
    }
  }
}

TEST(RoundToDtype, NanStaysNanWithItsSign) {
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    const float pos = cpu::round_to_dtype(t, std::nan(""));
    const float neg = cpu::round_to_dtype(t, -std::nan(""));
    EXPECT_TRUE(std::isnan(pos) && std::isnan(neg)) << dtype_name(t);
    EXPECT_FALSE(std::signbit(pos)) << dtype_name(t);
    EXPECT_TRUE(std::signbit(neg)) << dtype_name(t);
  }
}

}  // namespace
}  // namespace ampkit
