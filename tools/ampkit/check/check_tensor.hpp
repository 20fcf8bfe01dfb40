// A host buffer of one dtype for `ampkit check kernels` (tools layer, check/): elements read and
// written as doubles (rounded once to the dtype on write), random normal fill, and Deviation, the
// worst |got - reference| / tolerance of one comparison (the tolerances: error_bounds.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/float16.hpp"

namespace ampkit::tools::check {

struct CheckTensor {
  DType dtype = DType::f32;
  std::vector<unsigned char> bytes;

  CheckTensor() = default;
  CheckTensor(DType t, std::int64_t n) : dtype(t), bytes(static_cast<std::size_t>(n) * dtype_size(t), 0) {}

  std::int64_t size() const { return static_cast<std::int64_t>(bytes.size() / dtype_size(dtype)); }
  void* data() { return bytes.data(); }
  const void* data() const { return bytes.data(); }

  double get(std::int64_t i) const {
    if (dtype == DType::f32) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      return f;
    }
    std::uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return dtype == DType::bf16 ? bf16_bits_to_float(h) : half_bits_to_float(h);
  }
  void set(std::int64_t i, double v) {
    const auto f = static_cast<float>(v);
    if (dtype == DType::f32) {
      std::memcpy(bytes.data() + 4 * i, &f, 4);
      return;
    }
    const std::uint16_t h = dtype == DType::bf16 ? float_to_bf16_bits(f) : float_to_half_bits(f);
    std::memcpy(bytes.data() + 2 * i, &h, 2);
  }
  /// Every byte 0xff: NaN in every dtype, so an output element a kernel leaves unwritten fails.
  void poison() { std::fill(bytes.begin(), bytes.end(), static_cast<unsigned char>(0xff)); }
  void fill_normal(std::mt19937_64& rng, double stddev = 1.0, double mean = 0.0) {
    std::normal_distribution<double> dist(mean, stddev);
    for (std::int64_t i = 0; i < size(); ++i) set(i, dist(rng));
  }
};

/// The worst ratio |got - want| / tolerance seen in one comparison (<= 1 passes), and where.
struct Deviation {
  double ratio = 0.0;
  bool nan_mismatch = false;  // one side NaN, the other not
  void add(double got, double want, double tolerance) {
    if (std::isnan(got) || std::isnan(want)) {
      nan_mismatch = nan_mismatch || std::isnan(got) != std::isnan(want);
      return;
    }
    // Equal values (infinities included) pass; a zero tolerance (conversions, copies) also asks
    // for the same sign of zero.
    if (got == want && (tolerance > 0.0 || std::signbit(got) == std::signbit(want))) return;
    // Under a zero tolerance any difference is infinitely far.
    double r = tolerance > 0.0 ? std::fabs(got - want) / tolerance : INFINITY;
    if (std::isnan(r)) r = INFINITY;  // an infinite difference over an infinite tolerance fails too
    ratio = r > ratio ? r : ratio;
  }
  bool ok() const { return !nan_mismatch && ratio <= 1.0; }
};

}  // namespace ampkit::tools::check
