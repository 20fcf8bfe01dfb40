// Tests of the bf16/fp16 conversions: all 65536 16-bit patterns widened exactly, the edge cases
// of narrowing (ties, subnormals, overflow, NaN), and every bulk-conversion kernel vs the
// reference on every ISA this machine has.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/float16.hpp"
#include "ampkit/ops/convert.hpp"
#include "cpu/convert/convert_kernels.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

// Independent fp16 decoding in double: (-1)^s * 2^(e-15) * (1 + m/1024), subnormal 2^-14 * m/1024.
double decode_half(std::uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double magnitude;
  if (exponent == 0x1f)
    magnitude = mantissa ? std::nan("") : INFINITY;
  else if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24);
  else
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -magnitude : magnitude;
}

TEST(Float16, HalfToFloatIsExactOnAllPatterns) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = half_bits_to_float(h);
    const double expected = decode_half(h);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << bits;
      ASSERT_EQ(std::signbit(f), (bits & 0x8000) != 0) << std::hex << bits;
    } else {
      ASSERT_EQ(static_cast<double>(f), expected) << std::hex << bits;
      ASSERT_EQ(std::signbit(f), (bits & 0x8000) != 0) << std::hex << bits;
      // Round trip is the identity on every non-NaN pattern.
      ASSERT_EQ(float_to_half_bits(f), h) << std::hex << bits;
    }
  }
}

TEST(Float16, Bf16ToFloatIsExactOnAllPatterns) {
  for (std::uint32_t bits = 0; bits < 65536; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = bf16_bits_to_float(h);
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    ASSERT_EQ(u, bits << 16);
    if (!std::isnan(f)) {
      ASSERT_EQ(float_to_bf16_bits(f), h) << std::hex << bits;
    }
  }
}

TEST(Float16, HalfNarrowingEdgeCases) {
  // Ties between two fp16 neighbours go to the even mantissa.
  EXPECT_EQ(float_to_half_bits(1.0f + 0x1p-11f), 0x3c00);             // 1 + half ulp -> 1
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * 0x1p-11f), 0x3c02);         // 1 + 1.5 ulp -> 1 + 2 ulp
  EXPECT_EQ(float_to_half_bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);  // above the tie -> up
  // Largest finite, overflow and the tie at 65520.
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65519.996f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-1e30f), 0xfc00);
  EXPECT_EQ(float_to_half_bits(INFINITY), 0x7c00);
  // Subnormals: smallest, ties at half of the smallest (to even: 0) and 1.5x (to 2).
  EXPECT_EQ(float_to_half_bits(0x1p-24f), 0x0001);
  EXPECT_EQ(float_to_half_bits(0x1p-25f), 0x0000);
  EXPECT_EQ(float_to_half_bits(0x1.8p-24f), 0x0002);
  EXPECT_EQ(float_to_half_bits(0x1.000002p-25f), 0x0001);
  EXPECT_EQ(float_to_half_bits(-0x1p-24f), 0x8001);
  EXPECT_EQ(float_to_half_bits(0x1.ffcp-15f), 0x0400);  // 1023.5 units: tie, to even = 2^-14
  EXPECT_EQ(float_to_half_bits(0x1.ff8p-15f), 0x03ff);  // 1023 units exactly
  EXPECT_EQ(float_to_half_bits(0x1p-14f - 0x1p-24f), 0x03ff);
  EXPECT_EQ(float_to_half_bits(1e-10f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  // NaN stays NaN (quiet), sign kept.
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::quiet_NaN()) & 0x7e00, 0x7e00);
  EXPECT_EQ(float_to_half_bits(-std::numeric_limits<float>::quiet_NaN()) & 0x8000, 0x8000);
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::signaling_NaN()) & 0x7e00, 0x7e00);
}

TEST(Float16, Bf16NarrowingEdgeCases) {
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3f80);      // tie -> even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds to Inf
  EXPECT_EQ(float_to_bf16_bits(0x1p-133f), 0x0001);                          // subnormal, exact
  EXPECT_EQ(float_to_bf16_bits(0x1.8p-133f), 0x0002);                        // subnormal tie -> even
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(-INFINITY), 0xff80);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::signaling_NaN()) & 0x7fc0, 0x7fc0);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::quiet_NaN()) & 0x8000, 0x8000);
}

// Inputs that hit every rounding path: random bits, plus ties, subnormals, overflow, NaN, Inf.
std::vector<float> conversion_inputs(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<float> v;
  for (int i = 0; i < 200000; ++i) {
    auto u = static_cast<std::uint32_t>(rng());
    if (i % 4 == 1) u = (u & 0x80000000u) | ((u & 0x3fffffffu) % 0x0f000000u + 0x30000000u);  // fp16 range
    if (i % 4 == 2) u = (u & 0xffff8000u) | (i % 8 == 2 ? 0x8000u : 0x1000u);                 // ties
    if (i % 16 == 3) u &= 0x807fffffu;                                                        // float subnormals
    float f;
    std::memcpy(&f, &u, 4);
    v.push_back(f);
  }
  for (float f : {0.0f, -0.0f, 65504.0f, 65520.0f, 65536.0f, 0x1p-24f, 0x1p-25f, 0x1.8p-24f, INFINITY, -INFINITY,
                  std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::signaling_NaN(),
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min()})
    v.push_back(f);
  return v;
}

TEST(Convert, EveryKernelMatchesTheReferenceBitForBit) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  const std::vector<float> input = conversion_inputs(seed);
  const auto n = static_cast<std::int64_t>(input.size());
  int tested = 0;
  for (const ops::ConvertEntry& k : cpu::convert_kernels()) {
    if (const char* why = ops::kernel_unavailable_reason(k.needs)) {
      std::printf("[ SKIPPED  ] %s: %s\n", k.name, why);
      continue;
    }
    if (k.declines != nullptr && k.declines({nullptr, DType::f32, nullptr, DType::bf16, 1})) {
      EXPECT_STREQ(k.name, "convert_copy");  // the only entry that declines a valid problem
      continue;
    }
    ++tested;
    for (DType narrow : {DType::bf16, DType::f16}) {
      // Every length 0..40 checks the masked/partial tails, then the whole array.
      for (std::int64_t len : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{15}, std::int64_t{16},
                               std::int64_t{17}, std::int64_t{33}, n}) {
        std::vector<std::uint16_t> expected(static_cast<std::size_t>(len) + 1, 0xdead),
            got(static_cast<std::size_t>(len) + 1, 0xdead);
        cpu::convert_ref(input.data(), DType::f32, expected.data(), narrow, len);
        k.run({input.data(), DType::f32, got.data(), narrow, len});
        ASSERT_EQ(got, expected) << k.name << " f32 -> " << dtype_name(narrow) << " len " << len;
        // Widening back: every 16-bit value.
        std::vector<float> wide_expected(static_cast<std::size_t>(len) + 1, 7.0f),
            wide_got(static_cast<std::size_t>(len) + 1, 7.0f);
        cpu::convert_ref(expected.data(), narrow, wide_expected.data(), DType::f32, len);
        k.run({expected.data(), narrow, wide_got.data(), DType::f32, len});
        ASSERT_EQ(0, std::memcmp(wide_got.data(), wide_expected.data(), wide_got.size() * 4))
            << k.name << " " << dtype_name(narrow) << " -> f32 len " << len;
      }
    }
    // All 65536 patterns, both 16-bit types to f32 and to each other.
    std::vector<std::uint16_t> all(65536);
    for (std::uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<std::uint16_t>(i);
    for (DType from : {DType::bf16, DType::f16}) {
      for (DType to : {DType::f32, DType::bf16, DType::f16}) {
        if (from == to) continue;
        std::vector<unsigned char> expected(65536 * dtype_size(to)), got(65536 * dtype_size(to));
        cpu::convert_ref(all.data(), from, expected.data(), to, 65536);
        k.run({all.data(), from, got.data(), to, 65536});
        ASSERT_EQ(got, expected) << k.name << " " << dtype_name(from) << " -> " << dtype_name(to);
      }
    }
  }
  EXPECT_GE(tested, 1);
}

TEST(Convert, RejectsBadArguments) {
  float f[4] = {};
  std::uint16_t h[4] = {};
  EXPECT_THROW(convert(nullptr, DType::f32, h, DType::bf16, 4), Error);
  EXPECT_THROW(convert(f, DType::f32, nullptr, DType::bf16, 4), Error);
  EXPECT_THROW(convert(f, DType::f32, h, DType::bf16, -1), Error);
  EXPECT_THROW(convert(f, DType::f32, reinterpret_cast<char*>(f) + 2, DType::bf16, 4), Error);
  try {
    convert(f, DType::f32, h, DType::bf16, -3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "convert: n must be >= 0, but got -3");
  }
  EXPECT_NO_THROW(convert(nullptr, DType::f32, nullptr, DType::bf16, 0));
}

// The TensorView form gives the pointer form's bits; equal dtypes are a byte copy
// (convert_copy); the status query lists every entry with its reason.
TEST(Convert, ViewFormAndKernelQueries) {
  const std::uint64_t seed = testing::fresh_seed();
  const std::vector<float> input = conversion_inputs(seed);
  const auto n = static_cast<std::int64_t>(input.size() / 4 * 4);
  std::vector<std::uint16_t> by_pointer(static_cast<std::size_t>(n)), by_view(by_pointer.size());
  convert(input.data(), DType::f32, by_pointer.data(), DType::f16, n);
  const TensorView src(input.data(), DType::f32, {4, n / 4});
  const TensorView dst(by_view.data(), DType::f16, {4, n / 4});
  convert(src, dst);
  EXPECT_EQ(by_view, by_pointer);
  EXPECT_EQ(convert_check(src, dst), "");

  std::vector<float> copy(static_cast<std::size_t>(n));
  const TensorView same(copy.data(), DType::f32, {4, n / 4});
  EXPECT_STREQ(convert_kernel_name(src, same), "convert_copy");
  convert(src, same);
  EXPECT_EQ(0, std::memcmp(copy.data(), input.data(), copy.size() * sizeof(float)));

  const std::vector<KernelStatus> statuses = convert_kernel_statuses(src, dst);
  ASSERT_EQ(statuses.size(), cpu::convert_kernels().size());
  EXPECT_EQ(statuses[0].name, "convert_copy");
  EXPECT_EQ(statuses[0].declined, "copies only: src and dst dtypes differ");
  EXPECT_EQ(statuses.back().name, "convert_ref");
  EXPECT_TRUE(statuses.back().declined.empty());
  int selected = 0;
  for (const KernelStatus& s : statuses) {
    selected += s.selected;
    if (s.selected) {
      EXPECT_EQ(s.name, convert_kernel_name(src, dst));
    }
  }
  EXPECT_EQ(selected, 1);
}

}  // namespace
}  // namespace ampkit
