// Helpers shared by the tests of the training-graph ops (tests of the ops and kernels layers):
// views over test buffers, the dtype list, element-wise comparison with a tolerance function,
// byte equality, and error-message matching. Used by tests/ops/{elementwise,activation,embedding,
// softmax_cross_entropy,optimizer}/.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/numerics/error_bounds.hpp"
#include "support/test_support.hpp"

namespace ampkit::ops_testing {

using testing::Buffer;
using testing::unit_roundoff;

inline constexpr DType kFloatDTypes[] = {DType::f32, DType::bf16, DType::f16};
inline constexpr double kU32 = 0x1p-24;

/// Absolute error of rounding to dtype t below its normal range (half the fp16 subnormal step).
inline double subnormal_slack(DType t) { return t == DType::f16 ? 0x1p-25 : 0.0; }

/// A row-major view of `shape` over buffer b.
inline TensorView view_of(Buffer& b, std::initializer_list<std::int64_t> shape) {
  return TensorView(b.data(), b.dtype, shape);
}

/// A buffer of n elements of t filled with N(mean, stddev) values.
inline Buffer random_buffer(std::mt19937_64& rng, DType t, std::int64_t n, double mean = 0.0, double stddev = 1.0) {
  Buffer b(t, n);
  b.fill_normal(rng, mean, stddev);
  return b;
}

/// Compares got with want element-wise against tol(i); reports the first few mismatches. NaN in
/// got (a poisoned element left unwritten) fails unless want is NaN too.
inline ::testing::AssertionResult near(const char* what, const Buffer& got, const Buffer& want,
                                       const std::function<double(std::int64_t)>& tol) {
  int bad = 0;
  std::ostringstream out;
  for (std::int64_t i = 0; i < want.size(); ++i) {
    const double g = got.get(i), w = want.get(i), t = tol(i);
    const bool ok = (std::isnan(g) && std::isnan(w)) || g == w || std::fabs(g - w) <= t;
    if (!ok) {
      if (bad < 5)
        out << "\n  " << what << "[" << i << "] = " << g << ", reference " << w << ", |diff| " << std::fabs(g - w)
            << " > tolerance " << t;
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << want.size() << " elements of " << what
                                       << " out of tolerance:" << out.str();
}

inline ::testing::AssertionResult same_bytes(const char* what, const Buffer& a, const Buffer& b) {
  if (a.bytes == b.bytes) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << " differs between the two runs";
}

/// Runs f, expects an ampkit::Error of `kind` whose message contains every one of `parts`.
inline ::testing::AssertionResult fails_with(const std::function<void()>& f, ErrorKind kind,
                                             const std::vector<const char*>& parts) {
  try {
    f();
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const char* part : parts)
      if (message.find(part) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << part << "\"";
    if (e.kind() != kind)
      return ::testing::AssertionFailure() << "message \"" << message << "\" has kind " << error_kind_name(e.kind());
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no ampkit::Error thrown";
}

/// Runs f, expects an ampkit::Error (of any kind) whose message contains every one of `parts`.
inline ::testing::AssertionResult throws_with(const std::function<void()>& f,
                                              std::initializer_list<const char*> parts) {
  try {
    f();
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const char* part : parts)
      if (message.find(part) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << part << "\"";
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no ampkit::Error thrown";
}

inline std::string dtypes_name(std::initializer_list<DType> ts) {
  std::string s;
  for (DType t : ts) {  // (appended: GCC 12 warns falsely, -Wrestrict, on "/" + std::string)
    if (!s.empty()) s += '/';
    s += dtype_name(t);
  }
  return s;
}

}  // namespace ampkit::ops_testing
