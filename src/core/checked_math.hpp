// Checked int64 arithmetic for sizes (core layer, internal): every validator computes element
// and byte counts through these, so an overflow is an error message, never a wrapped size.
#pragma once

#include <cstdint>
#include <optional>

namespace ampkit {

/// a * b, or nullopt when it overflows int64.
inline std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a + b, or nullopt when it overflows int64.
inline std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace ampkit
