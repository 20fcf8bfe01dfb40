// Shared checks of the norm tests (tests of the kernels layer): random inputs, poisoned outputs,
// one call of the kernel under test (an entry of the kernel lists, run through the front end's
// validation, or the public call) and one of the reference entry, and element-wise comparison
// with the error bounds of docs/NUMERICS.md ("LayerNorm and RMSNorm").
// Used by norm_kernels_test.cpp and norm_threads_test.cpp.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/norm.hpp"
#include "ops/norm/norm_front_end.hpp"
#include "support/test_support.hpp"

namespace ampkit::norm_testing {

using testing::Buffer;
using testing::unit_roundoff;

struct Mix {
  DType x;
  DType param;
};
// Every supported dtype combination: x in {f32, bf16, f16}, parameters x's dtype or f32.
inline const Mix kMixes[] = {{DType::f32, DType::f32},
                             {DType::bf16, DType::bf16},
                             {DType::bf16, DType::f32},
                             {DType::f16, DType::f16},
                             {DType::f16, DType::f32}};

inline std::string mix_name(Mix m) { return std::string(dtype_name(m.x)) + "/" + std::string(dtype_name(m.param)); }

// The bounds: ampkit/numerics/error_bounds.hpp (norm_*).
namespace eb = error_bounds;

// Compares got with want element-wise against tol(i); reports the first few mismatches.
template <class Tol>
::testing::AssertionResult compare(const char* what, const Buffer& got, const Buffer& want, std::int64_t count,
                                   Tol tol) {
  int bad = 0;
  std::ostringstream out;
  for (std::int64_t i = 0; i < count; ++i) {
    const double g = got.get(i), w = want.get(i), t = tol(i);
    if (!(std::fabs(g - w) <= t)) {  // NaN (an unwritten, poisoned element) fails too
      if (bad < 5)
        out << "\n  " << what << "[" << i << "] = " << g << ", reference " << w << ", |diff| " << std::fabs(g - w)
            << " > tolerance " << t;
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << count << " elements of " << what
                                       << " out of tolerance:" << out.str();
}

inline ::testing::AssertionResult same_bytes(const char* what, const Buffer& a, const Buffer& b) {
  if (a.bytes == b.bytes) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << " differs";
}

struct ForwardCase {
  bool rms = false;
  Mix mix{DType::f32, DType::f32};
  std::int64_t rows = 1, n = 1;
  bool gamma = true, beta = true;  // beta ignored for RMSNorm
  bool stats = true;               // request mean (LayerNorm) and rstd
  float eps = 1e-5f;
  double offset = 0.0, stddev = 1.0;  // x ~ N(offset, stddev)
  double head_shift = 0.0;            // added to the first min(n, 32) elements of each row
  int kernel = -1;                    // index into the kernel lists; -1: the public call (selected kernel)
};

inline std::string describe(const ForwardCase& c) {
  std::ostringstream s;
  s << (c.rms ? "rms" : "layer") << "_norm_forward " << mix_name(c.mix) << " rows " << c.rows << " n " << c.n
    << (c.gamma ? " gamma" : "") << (c.beta && !c.rms ? " beta" : "") << (c.stats ? "" : " no-stats") << " offset "
    << c.offset << " head_shift " << c.head_shift;
  return s.str();
}

struct ForwardRun {
  Buffer x, gamma, beta, y, mean, rstd;
};

inline TensorView view(Buffer& b, DType t, std::initializer_list<std::int64_t> shape) {
  return TensorView(b.data(), t, shape);
}

inline NormKind kind_of(bool rms) { return rms ? NormKind::rms : NormKind::layer; }

/// The index of the reference entry (the last of every list).
inline int reference_kernel() { return static_cast<int>(ops::norm_forward_kernels(NormKind::layer).size()) - 1; }

/// One forward call: the public call (kernel < 0) or entry `kernel` of the list, after the
/// front end's validation.
inline void run_forward(const ForwardCase& c, ForwardRun& run, int kernel) {
  NormForwardArgs a;
  a.x = view(run.x, c.mix.x, {c.rows, c.n});
  if (c.gamma) a.gamma = view(run.gamma, c.mix.param, {c.n});
  if (c.beta && !c.rms) a.beta = view(run.beta, c.mix.param, {c.n});
  a.eps = c.eps;
  a.y = view(run.y, c.mix.x, {c.rows, c.n});
  if (c.stats && !c.rms) a.mean = view(run.mean, DType::f32, {c.rows});
  if (c.stats) a.rstd = view(run.rstd, DType::f32, {c.rows});
  const NormKind kind = kind_of(c.rms);
  if (kernel < 0) {
    if (c.rms)
      rms_norm_forward(a);
    else
      layer_norm_forward(a);
    return;
  }
  const auto list = ops::norm_forward_kernels(kind);
  ops::run_norm_forward(ops::validate_norm_forward("test", kind, a), list[kernel]);
}

/// Random inputs; runs kernel c.kernel (or the selected one) and the reference; checks y, mean and
/// rstd against the bounds of docs/NUMERICS.md. Returns the kernel's run (for bitwise checks).
/// With check = false only the kernel runs (same inputs for the same rng state).
inline ForwardRun check_forward(const ForwardCase& c, std::mt19937_64& rng, bool check = true) {
  SCOPED_TRACE(describe(c));
  const std::int64_t rows = c.rows, n = c.n, size = rows * n;
  ForwardRun k;
  k.x = Buffer(c.mix.x, size);
  k.x.fill_normal(rng, c.offset, c.stddev);
  // A shifted head makes the one-pass kernels' shift (the mean of the first 32 elements) poor.
  for (std::int64_t i = 0; i < rows && c.head_shift != 0.0; ++i)
    for (std::int64_t j = 0; j < std::min<std::int64_t>(n, 32); ++j)
      k.x.set(i * n + j, k.x.get(i * n + j) + c.head_shift);
  k.gamma = Buffer(c.mix.param, n);
  k.gamma.fill_normal(rng, 1.0, 0.5);
  k.beta = Buffer(c.mix.param, n);
  k.beta.fill_normal(rng, 0.0, 1.0);
  k.y = Buffer(c.mix.x, size);
  k.mean = Buffer(DType::f32, rows);
  k.rstd = Buffer(DType::f32, rows);
  k.y.poison();
  k.mean.poison();
  k.rstd.poison();
  ForwardRun ref = k;
  run_forward(c, k, c.kernel);
  if (!check) return k;
  run_forward(c, ref, reference_kernel());
  // Per-row statistics in double and the kernel's error bounds on them.
  std::vector<eb::NormRowBound> row(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i)
    row[i] = eb::norm_row_bound([&](std::int64_t j) { return k.x.get(i * n + j); }, n, c.rms, c.eps);
  EXPECT_TRUE(compare("y", k.y, ref.y, size, [&](std::int64_t e) {
    const std::int64_t i = e / n, j = e % n;
    const double g = c.gamma ? std::fabs(k.gamma.get(j)) : 1.0;
    const double b = c.beta && !c.rms ? std::fabs(k.beta.get(j)) : 0.0;
    return eb::norm_y(row[i], k.x.get(e), g, b, ref.y.get(e), c.mix.x);
  }));
  if (c.stats && !c.rms)
    EXPECT_TRUE(compare("mean", k.mean, ref.mean, rows, [&](std::int64_t i) { return eb::norm_mean(row[i]); }));
  else
    EXPECT_TRUE(same_bytes("mean (not requested, must stay poisoned)", k.mean, ref.mean));
  if (c.stats)
    EXPECT_TRUE(compare("rstd", k.rstd, ref.rstd, rows, [&](std::int64_t i) { return eb::norm_rstd(row[i]); }));
  else
    EXPECT_TRUE(same_bytes("rstd (not requested, must stay poisoned)", k.rstd, ref.rstd));
  return k;
}

struct BackwardCase {
  bool rms = false;
  Mix mix{DType::f32, DType::f32};
  std::int64_t rows = 1, n = 1;
  bool gamma = true;
  bool dx = true, dgamma = true, dbeta = true;  // dgamma needs gamma; dbeta ignored for RMSNorm
  bool accumulate = false;
  double offset = 0.0, stddev = 1.0;
  int kernel = -1;  // index into the kernel lists; -1: the public call (selected kernel)
};

inline std::string describe(const BackwardCase& c) {
  std::ostringstream s;
  s << (c.rms ? "rms" : "layer") << "_norm_backward " << mix_name(c.mix) << " rows " << c.rows << " n " << c.n
    << (c.gamma ? " gamma" : "") << (c.dx ? " dx" : "") << (c.dgamma ? " dgamma" : "")
    << (c.dbeta && !c.rms ? " dbeta" : "") << (c.accumulate ? " accumulate" : "");
  return s.str();
}

struct BackwardRun {
  Buffer dy, x, mean, rstd, gamma, dx, dgamma, dbeta;
};

/// One backward call: the public call (kernel < 0) or entry `kernel` of the list.
inline void run_backward(const BackwardCase& c, BackwardRun& run, int kernel) {
  NormBackwardArgs a;
  a.dy = view(run.dy, c.mix.x, {c.rows, c.n});
  a.x = view(run.x, c.mix.x, {c.rows, c.n});
  if (!c.rms) a.mean = view(run.mean, DType::f32, {c.rows});
  a.rstd = view(run.rstd, DType::f32, {c.rows});
  if (c.gamma) a.gamma = view(run.gamma, c.mix.param, {c.n});
  if (c.dx) a.dx = view(run.dx, c.mix.x, {c.rows, c.n});
  if (c.dgamma) a.dgamma = view(run.dgamma, c.mix.param, {c.n});
  if (c.dbeta && !c.rms) a.dbeta = view(run.dbeta, c.mix.param, {c.n});
  a.accumulate = c.accumulate;
  const NormKind kind = kind_of(c.rms);
  if (kernel < 0) {
    if (c.rms)
      rms_norm_backward(a);
    else
      layer_norm_backward(a);
    return;
  }
  const auto list = ops::norm_backward_kernels(kind);
  ops::run_norm_backward(ops::validate_norm_backward("test", kind, a), list[kernel]);
}

/// Random dy, x, gamma; mean/rstd from the reference forward; runs kernel c.kernel and the
/// reference backward and checks dx, dgamma, dbeta against the bounds of docs/NUMERICS.md.
/// With check = false only the kernel runs (same inputs for the same rng state).
inline BackwardRun check_backward(const BackwardCase& c, std::mt19937_64& rng, bool check = true) {
  SCOPED_TRACE(describe(c));
  const std::int64_t rows = c.rows, n = c.n, size = rows * n;
  BackwardRun k;
  k.dy = Buffer(c.mix.x, size);
  k.dy.fill_normal(rng, 0.0, 1.0);
  k.x = Buffer(c.mix.x, size);
  k.x.fill_normal(rng, c.offset, c.stddev);
  k.gamma = Buffer(c.mix.param, n);
  k.gamma.fill_normal(rng, 1.0, 0.5);
  k.mean = Buffer(DType::f32, rows);
  k.rstd = Buffer(DType::f32, rows);
  {
    testing::IsaScope scope(Isa::ref);
    NormForwardArgs f;
    Buffer y(c.mix.x, size);
    f.x = view(k.x, c.mix.x, {rows, n});
    f.y = view(y, c.mix.x, {rows, n});
    if (!c.rms) f.mean = view(k.mean, DType::f32, {rows});
    f.rstd = view(k.rstd, DType::f32, {rows});
    if (c.rms)
      rms_norm_forward(f);
    else
      layer_norm_forward(f);
  }
  k.dx = Buffer(c.mix.x, size);
  k.dx.poison();
  k.dgamma = Buffer(c.mix.param, n);
  k.dbeta = Buffer(c.mix.param, n);
  if (c.accumulate) {  // previous gradients to add to
    k.dgamma.fill_normal(rng, 0.0, 4.0);
    k.dbeta.fill_normal(rng, 0.0, 4.0);
  } else {
    k.dgamma.poison();
    k.dbeta.poison();
  }
  BackwardRun ref = k;
  const BackwardRun before = k;
  run_backward(c, k, c.kernel);
  if (!check) return k;
  run_backward(c, ref, reference_kernel());
  // Scales in double: g = gamma*dy, xhat = (x - mean)*rstd from the given fp32 mean/rstd.
  std::vector<double> xhat(static_cast<std::size_t>(size)), g(static_cast<std::size_t>(size));
  std::vector<double> g1(rows, 0.0), g2(rows, 0.0), sum_dgamma(n, 0.0), sum_dbeta(n, 0.0);
  for (std::int64_t e = 0; e < size; ++e) {
    const std::int64_t i = e / n, j = e % n;
    const double m = c.rms ? 0.0 : static_cast<const float*>(k.mean.data())[i];
    const double dy = k.dy.get(e);
    xhat[e] = (k.x.get(e) - m) * static_cast<const float*>(k.rstd.data())[i];
    g[e] = dy * (c.gamma ? k.gamma.get(j) : 1.0);
    g1[i] += std::fabs(g[e]) / static_cast<double>(n);
    g2[i] += std::fabs(g[e] * xhat[e]) / static_cast<double>(n);
    sum_dgamma[j] += std::fabs(dy * xhat[e]);
    sum_dbeta[j] += std::fabs(dy);
  }
  if (c.dx)
    EXPECT_TRUE(compare("dx", k.dx, ref.dx, size, [&](std::int64_t e) {
      const double r = static_cast<const float*>(k.rstd.data())[e / n];
      return eb::norm_dx(n, r, std::fabs(g[e]), std::fabs(xhat[e]), g1[e / n], g2[e / n], ref.dx.get(e), c.mix.x);
    }));
  else
    EXPECT_TRUE(same_bytes("dx (not requested, must stay poisoned)", k.dx, before.dx));
  auto param_tol = [&](const Buffer& out, const Buffer& old, const std::vector<double>& sum, double extra) {
    return [&, extra](std::int64_t j) {
      const double old_abs = c.accumulate ? std::fabs(old.get(j)) : 0.0;
      return eb::norm_param_grad(rows, extra, sum[j], old_abs, out.get(j), c.mix.param);
    };
  };
  if (c.dgamma)
    EXPECT_TRUE(compare("dgamma", k.dgamma, ref.dgamma, n, param_tol(ref.dgamma, before.dgamma, sum_dgamma, 3.0)));
  else
    EXPECT_TRUE(same_bytes("dgamma (not requested, must stay untouched)", k.dgamma, before.dgamma));
  if (c.dbeta && !c.rms)
    EXPECT_TRUE(compare("dbeta", k.dbeta, ref.dbeta, n, param_tol(ref.dbeta, before.dbeta, sum_dbeta, 1.0)));
  else
    EXPECT_TRUE(same_bytes("dbeta (not requested, must stay untouched)", k.dbeta, before.dbeta));
  return k;
}

}  // namespace ampkit::norm_testing
