// The LayerNorm/RMSNorm reference backward (kernels layer tests) against central finite
// differences of an independent double-precision forward: the loss sum(y * w) for a random w,
// differentiated by x, gamma and beta. Small f32 shapes, both norms, with and without gamma/beta.
#include <cmath>
#include <random>
#include <vector>

#include "ampkit/ops/norm.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

struct Params {
  bool rms;
  bool gamma;
  bool beta;
};

// sum over rows, columns of w * y with y computed in double from the definition.
double loss(const Params& p, std::int64_t rows, std::int64_t n, const std::vector<double>& x,
            const std::vector<double>& gamma, const std::vector<double>& beta, const std::vector<double>& w,
            double eps) {
  double total = 0.0;
  for (std::int64_t i = 0; i < rows; ++i) {
    double mu = 0.0, var = 0.0;
    if (!p.rms) {
      for (std::int64_t j = 0; j < n; ++j) mu += x[i * n + j];
      mu /= static_cast<double>(n);
    }
    for (std::int64_t j = 0; j < n; ++j) var += (x[i * n + j] - mu) * (x[i * n + j] - mu);
    var /= static_cast<double>(n);
    for (std::int64_t j = 0; j < n; ++j) {
      double y = (x[i * n + j] - mu) / std::sqrt(var + eps);
      if (p.gamma) y *= gamma[j];
      if (p.beta) y += beta[j];
      total += w[i * n + j] * y;
    }
  }
  return total;
}

// Central difference of loss in the k-th element of v.
template <class Loss>
double central_difference(std::vector<double>& v, std::size_t k, Loss f) {
  const double h = 1e-4 * std::max(1.0, std::fabs(v[k]));
  const double saved = v[k];
  v[k] = saved + h;
  const double up = f();
  v[k] = saved - h;
  const double down = f();
  v[k] = saved;
  return (up - down) / (2.0 * h);
}

TEST(NormReference, BackwardMatchesFiniteDifferences) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  testing::IsaScope scope(Isa::ref);
  const float eps = 1e-3f;
  for (const Params p : {Params{false, false, false}, Params{false, true, false}, Params{false, true, true},
                         Params{false, false, true}, Params{true, false, false}, Params{true, true, false}})
    for (std::int64_t n : {1, 2, 5, 16, 33}) {
      const std::int64_t rows = 3;
      SCOPED_TRACE(::testing::Message() << (p.rms ? "rms" : "layer") << " gamma " << p.gamma << " beta " << p.beta
                                        << " n " << n);
      testing::Buffer x(DType::f32, rows * n), gamma(DType::f32, n), beta(DType::f32, n), w(DType::f32, rows * n),
          y(DType::f32, rows * n), mean(DType::f32, rows), rstd(DType::f32, rows), dx(DType::f32, rows * n),
          dgamma(DType::f32, n), dbeta(DType::f32, n);
      x.fill_normal(rng, p.rms ? 0.5 : 0.3, 1.0);
      gamma.fill_normal(rng, 1.0, 0.5);
      beta.fill_normal(rng, 0.0, 1.0);
      w.fill_normal(rng, 0.0, 1.0);
      dx.poison();
      dgamma.poison();
      dbeta.poison();
      NormForwardArgs f;
      f.x = TensorView(x.data(), DType::f32, {rows, n});
      if (p.gamma) f.gamma = TensorView(gamma.data(), DType::f32, {n});
      if (p.beta) f.beta = TensorView(beta.data(), DType::f32, {n});
      f.eps = eps;
      f.y = TensorView(y.data(), DType::f32, {rows, n});
      if (!p.rms) f.mean = TensorView(mean.data(), DType::f32, {rows});
      f.rstd = TensorView(rstd.data(), DType::f32, {rows});
      if (p.rms)
        rms_norm_forward(f);
      else
        layer_norm_forward(f);
      NormBackwardArgs b;
      b.dy = TensorView(w.data(), DType::f32, {rows, n});
      b.x = f.x;
      if (!p.rms) b.mean = f.mean;
      b.rstd = f.rstd;
      if (p.gamma) b.gamma = f.gamma;
      b.dx = TensorView(dx.data(), DType::f32, {rows, n});
      if (p.gamma) b.dgamma = TensorView(dgamma.data(), DType::f32, {n});
      if (p.beta) b.dbeta = TensorView(dbeta.data(), DType::f32, {n});
      if (p.rms)
        rms_norm_backward(b);
      else
        layer_norm_backward(b);

      auto to_double = [](const testing::Buffer& buf) {
        std::vector<double> v(static_cast<std::size_t>(buf.size()));
        for (std::int64_t i = 0; i < buf.size(); ++i) v[i] = buf.get(i);
        return v;
      };
      std::vector<double> xd = to_double(x), gd = to_double(gamma), bd = to_double(beta), wd = to_double(w);
      auto f_loss = [&] { return loss(p, rows, n, xd, gd, bd, wd, eps); };
      // Tolerance: the reference uses the fp32-rounded mean/rstd and rounds its outputs to
      // fp32 (relative errors ~1e-7 of the terms); the central difference is accurate to
      // ~h^2 = 1e-8 relative. 1e-5 of the sum of the magnitudes of the terms covers both, and
      // any formula error (a missing term) is of the order of the terms themselves.
      for (std::int64_t i = 0; i < rows; ++i) {
        const double r = rstd.get(i), m = p.rms ? 0.0 : mean.get(i);
        double g1 = 0.0, g2 = 0.0;
        for (std::int64_t j = 0; j < n; ++j) {
          const double g = wd[i * n + j] * (p.gamma ? gd[j] : 1.0);
          g1 += std::fabs(g) / static_cast<double>(n);
          g2 += std::fabs(g * (xd[i * n + j] - m) * r) / static_cast<double>(n);
        }
        for (std::int64_t j = 0; j < n; ++j) {
          const std::size_t e = static_cast<std::size_t>(i * n + j);
          const double fd = central_difference(xd, e, f_loss);
          const double g = wd[e] * (p.gamma ? gd[j] : 1.0);
          const double scale = r * (std::fabs(g) + g1 + std::fabs((xd[e] - m) * r) * g2);
          EXPECT_NEAR(dx.get(i * n + j), fd, 1e-5 * scale + 1e-9) << "dx " << i << ", " << j;
        }
      }
      for (std::int64_t j = 0; j < n; ++j) {
        if (p.gamma) {
          double scale = 0.0;
          for (std::int64_t i = 0; i < rows; ++i)
            scale += std::fabs(wd[i * n + j] * (xd[i * n + j] - (p.rms ? 0.0 : mean.get(i))) * rstd.get(i));
          const double fd = central_difference(gd, static_cast<std::size_t>(j), f_loss);
          EXPECT_NEAR(dgamma.get(j), fd, 1e-5 * scale + 1e-9) << "dgamma " << j;
        }
        if (p.beta) {
          double scale = 0.0;
          for (std::int64_t i = 0; i < rows; ++i) scale += std::fabs(wd[i * n + j]);
          const double fd = central_difference(bd, static_cast<std::size_t>(j), f_loss);
          EXPECT_NEAR(dbeta.get(j), fd, 1e-5 * scale + 1e-9) << "dbeta " << j;
        }
      }
    }
}

}  // namespace
}  // namespace ampkit
