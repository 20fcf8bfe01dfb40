// bfloat16 and half (IEEE binary16): 16-bit storage types with exact conversions (core layer).
// float -> 16 bit rounds to nearest even; NaN stays a quiet NaN (sign kept); fp16 overflow goes
// to ±Inf; fp16 subnormals are produced and read exactly. 16 bit -> float is exact.
// The conversions are static inline so that an ISA-specific translation unit that uses them
// keeps its own copy (no shared weak symbol compiled with another ISA's flags).
#pragma once

#include <bit>
#include <cstdint>

namespace ampkit {

/// bf16 bits -> float (exact).
static inline float bf16_bits_to_float(std::uint16_t h) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

/// float -> bf16 bits, round to nearest even; NaN -> quiet NaN with the same sign.
static inline std::uint16_t float_to_bf16_bits(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

/// fp16 bits -> float (exact, subnormals included).
static inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f)  // Inf or NaN (payload kept, quiet bit set)
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13) | (mantissa ? 0x400000u : 0u));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
}

/// float -> fp16 bits, round to nearest even; overflow -> ±Inf; NaN -> quiet NaN, sign kept.
static inline std::uint16_t float_to_half_bits(float f) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (a >= 0x38800000u) {                                                   // normal fp16 range (>= 2^-14)
    const std::uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  // Subnormal or zero: scale so that the fp16 subnormal step 2^-24 becomes one unit; the float
  // addition rounds to nearest even for us.
  const float scaled = std::bit_cast<float>(a) + 0.5f;  // 0.5 = 2^-1 puts 2^-24 at the last bit
  return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(scaled) - 0x3f000000u));
}

/// bfloat16 storage type: 1 sign, 8 exponent, 7 mantissa bits.
struct bfloat16 {
  std::uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(float_to_bf16_bits(f)) {}
  static bfloat16 from_bits(std::uint16_t b) {
    bfloat16 r;
    r.bits = b;
    return r;
  }
  explicit operator float() const { return bf16_bits_to_float(bits); }
};

/// IEEE binary16 storage type: 1 sign, 5 exponent, 10 mantissa bits.
struct half {
  std::uint16_t bits = 0;
  half() = default;
  explicit half(float f) : bits(float_to_half_bits(f)) {}
  static half from_bits(std::uint16_t b) {
    half r;
    r.bits = b;
    return r;
  }
  explicit operator float() const { return half_bits_to_float(bits); }
};

static_assert(sizeof(bfloat16) == 2 && sizeof(half) == 2);

}  // namespace ampkit
