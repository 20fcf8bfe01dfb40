// Tests of the attention vector kernels' exp (kernels layer): within 2 ulp of exp (in double) over
// the whole range the kernels feed it, [-104, 88.72] (subnormal results measured in ulps of the
// smallest subnormal), and the AVX2 and AVX-512 versions give the same bits. Skips, saying why,
// where an ISA is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cpu/attention/attention_kernels.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit {
namespace {

// Every float of [-104, 88.72] whose bit pattern is a multiple of 1009 (about 2.2 million), plus
// the ends, 0, -0 and the points where the range reduction switches n.
std::vector<float> sample() {
  std::vector<float> x = {-104.0f, 88.72f, 0.0f, -0.0f, -87.3f, -87.4f, -0.34657359f, 0.34657359f};
  for (std::uint32_t sign : {0u, 0x80000000u})
    for (std::uint32_t u = 0; u < 0x7f800000u; u += 1009) {
      const float v = std::bit_cast<float>(u | sign);
      if (v >= -104.0f && v <= 88.72f) x.push_back(v);
    }
  return x;
}

// |y - exp(x)| in ulps of exp(x) (at least the smallest subnormal's).
double ulps(float x, float y) {
  const double e = std::exp(double{x});
  int ex = 0;
  std::frexp(e, &ex);
  return std::fabs(double{y} - e) / std::ldexp(1.0, std::max(ex - 24, -149));
}

TEST(AttentionExp, WithinTwoUlpAndTheSameBitsAtBothWidths) {
  const char* no512 = ops::kernel_unavailable_reason({Device::cpu, Isa::avx512, false});
  const char* no2 = ops::kernel_unavailable_reason({Device::cpu, Isa::avx2, false});
  if (no512 != nullptr) std::printf("[ SKIPPED  ] attention_exp_avx512: %s\n", no512);
  if (no2 != nullptr) std::printf("[ SKIPPED  ] attention_exp_avx2: %s\n", no2);
  if (no512 != nullptr && no2 != nullptr) GTEST_SKIP() << "neither AVX2 nor AVX-512 available";
  const std::vector<float> x = sample();
  std::vector<float> y512(x.size()), y2(x.size());
  if (no512 == nullptr) cpu::attention_exp_avx512(x.data(), y512.data(), static_cast<std::int64_t>(x.size()));
  if (no2 == nullptr) cpu::attention_exp_avx2(x.data(), y2.data(), static_cast<std::int64_t>(x.size()));
  double worst512 = 0.0, worst2 = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (no512 == nullptr) worst512 = std::max(worst512, ulps(x[i], y512[i]));
    if (no2 == nullptr) worst2 = std::max(worst2, ulps(x[i], y2[i]));
    if (no512 == nullptr && no2 == nullptr) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(y512[i]), std::bit_cast<std::uint32_t>(y2[i])) << "exp(" << x[i] << ")";
    }
  }
  EXPECT_LE(worst512, 2.0);
  EXPECT_LE(worst2, 2.0);
  // exp_f32's clamps: NaN stays NaN, below -104 the value at -104, exp(0) = 1 exactly.
  const float special[] = {NAN, -1000.0f, 0.0f};
  float out[3];
  if (no512 == nullptr) {
    cpu::attention_exp_avx512(special, out, 3);
    EXPECT_TRUE(std::isnan(out[0]));
    EXPECT_EQ(out[1], y512[0]);
    EXPECT_EQ(out[2], 1.0f);
  }
  std::printf("attention exp: worst %.3f ulp (avx512), %.3f ulp (avx2) over %zu values\n", worst512, worst2, x.size());
}

}  // namespace
}  // namespace ampkit
