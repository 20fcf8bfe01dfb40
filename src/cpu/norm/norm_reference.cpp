// LayerNorm/RMSNorm reference kernels (kernels layer): plain loops, every sum in double, each
// output rounded once. The last entry of the norm kernel list and the yardstick of the tests.
// Forward: mean/variance in double; y from the double statistics; mean/rstd stored as fp32.
// Backward: uses the fp32 mean/rstd it is given; dgamma/dbeta summed over all rows in double.
#include <cmath>
#include <cstdint>

#include "ampkit/core/float16.hpp"
#include "core/element.hpp"
#include "cpu/norm/norm_kernels.hpp"

namespace ampkit::cpu {
namespace {

const char* row(const void* base, DType t, std::int64_t r, std::int64_t n) {
  return static_cast<const char*>(base) + r * n * static_cast<std::int64_t>(dtype_size(t));
}
char* row(void* base, DType t, std::int64_t r, std::int64_t n) {
  return static_cast<char*>(base) + r * n * static_cast<std::int64_t>(dtype_size(t));
}

// x: [rows, n] -> y: [rows, n]; mean/rstd: [rows].
//   mu = sum(x)/n, var = sum((x - mu)^2)/n (LayerNorm) or mu = 0, var = sum(x^2)/n (RMSNorm),
//   r = 1/sqrt(var + eps), y = (x - mu) * r * gamma + beta.
void forward(const ops::NormForwardProblem& p, bool rms) {
  const double n = static_cast<double>(p.n);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const char* x = row(p.x, p.x_dtype, r, p.n);
    char* y = row(p.y, p.x_dtype, r, p.n);
    double mu = 0.0;
    if (!rms) {
      for (std::int64_t j = 0; j < p.n; ++j) mu += load_element(x, p.x_dtype, j);
      mu /= n;
    }
    double var = 0.0;
    for (std::int64_t j = 0; j < p.n; ++j) {
      const double d = load_element(x, p.x_dtype, j) - mu;
      var += d * d;
    }
    var /= n;
    const double rstd = 1.0 / std::sqrt(var + static_cast<double>(p.eps));
    for (std::int64_t j = 0; j < p.n; ++j) {
      double v = (load_element(x, p.x_dtype, j) - mu) * rstd;
      if (p.gamma) v *= load_element(p.gamma, p.param_dtype, j);
      if (p.beta) v += load_element(p.beta, p.param_dtype, j);
      store_double(y, p.x_dtype, j, v);
    }
    if (p.mean) p.mean[r] = static_cast<float>(mu);
    if (p.rstd) p.rstd[r] = static_cast<float>(rstd);
  }
}

// With g = gamma * dy and xhat = (x - mean) * rstd (mean = 0 for RMSNorm):
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))   (no mean(g) term for RMSNorm)
//   dgamma = sum over rows of dy * xhat, dbeta = sum over rows of dy.
void backward(const ops::NormBackwardProblem& p, bool rms) {
  const double n = static_cast<double>(p.n);
  const bool need_x = p.dx != nullptr || p.dgamma != nullptr;
  // dgamma/dbeta are accumulated in double over all rows in the first n slots of a scratch
  // buffer of doubles (2n), then rounded once.
  double* sums = reinterpret_cast<double*>(norm_scratch(4 * p.n));
  double* dgamma = sums;
  double* dbeta = sums + p.n;
  for (std::int64_t j = 0; j < 2 * p.n; ++j) sums[j] = 0.0;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const char* dy = row(p.dy, p.x_dtype, r, p.n);
    if (p.dbeta)
      for (std::int64_t j = 0; j < p.n; ++j) dbeta[j] += load_element(dy, p.x_dtype, j);
    if (!need_x) continue;
    const char* x = row(p.x, p.x_dtype, r, p.n);
    const double mu = rms ? 0.0 : static_cast<double>(p.mean[r]);
    const double rstd = p.rstd[r];
    auto xhat = [&](std::int64_t j) { return (load_element(x, p.x_dtype, j) - mu) * rstd; };
    auto g = [&](std::int64_t j) {
      const double d = load_element(dy, p.x_dtype, j);
      return p.gamma ? d * load_element(p.gamma, p.param_dtype, j) : d;
    };
    if (p.dgamma)
      for (std::int64_t j = 0; j < p.n; ++j) dgamma[j] += load_element(dy, p.x_dtype, j) * xhat(j);
    if (!p.dx) continue;
    double sum_g = 0.0, sum_gx = 0.0;
    for (std::int64_t j = 0; j < p.n; ++j) {
      sum_g += g(j);
      sum_gx += g(j) * xhat(j);
    }
    const double mean_g = rms ? 0.0 : sum_g / n, mean_gx = sum_gx / n;
    char* dx = row(p.dx, p.x_dtype, r, p.n);
    for (std::int64_t j = 0; j < p.n; ++j) store_double(dx, p.x_dtype, j, rstd * (g(j) - mean_g - xhat(j) * mean_gx));
  }
  for (std::int64_t j = 0; j < p.n; ++j) {
    if (p.dgamma)
      store_double(p.dgamma, p.param_dtype, j,
                   dgamma[j] + (p.accumulate ? load_element(p.dgamma, p.param_dtype, j) : 0.0));
    if (p.dbeta)
      store_double(p.dbeta, p.param_dtype, j,
                   dbeta[j] + (p.accumulate ? load_element(p.dbeta, p.param_dtype, j) : 0.0));
  }
}

}  // namespace

void layer_norm_fwd_ref(const ops::NormForwardProblem& p) { forward(p, false); }
void rms_norm_fwd_ref(const ops::NormForwardProblem& p) { forward(p, true); }
void layer_norm_bwd_ref(const ops::NormBackwardProblem& p) { backward(p, false); }
void rms_norm_bwd_ref(const ops::NormBackwardProblem& p) { backward(p, true); }

}  // namespace ampkit::cpu
