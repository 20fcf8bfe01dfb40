// The LayerNorm / RMSNorm part of `ampkit check kernels` (tools layer, check/): forward and
// backward over row lengths (short, odd, long) and every dtype mix (x in f32, bf16 or f16;
// gamma/beta in x's dtype or f32), run at the ISA under test and at `ref` (the reference: double
// sums, one rounding), compared with the norm bounds of error_bounds.hpp (docs/NUMERICS.md): fp32
// row statistics over chains of at most n/8 + 16 adds, each output one rounding to its dtype.
#include "tools/ampkit/check/check_families.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/norm.hpp"
#include "tools/ampkit/check/check_run.hpp"
#include "tools/ampkit/check/check_tensor.hpp"

namespace ampkit::tools::check {
namespace {

namespace eb = error_bounds;

struct NormCase {
  NormKind kind;
  std::int64_t rows, n;
  DType x, param;
};

struct NormBuffers {
  CheckTensor x, gamma, beta, y, mean, rstd, dy, dx, dgamma, dbeta;
};

NormBuffers make_inputs(const NormCase& c, std::mt19937_64& rng) {
  NormBuffers b;
  const std::int64_t count = c.rows * c.n;
  b.x = CheckTensor(c.x, count), b.y = CheckTensor(c.x, count), b.dy = CheckTensor(c.x, count);
  b.dx = CheckTensor(c.x, count);
  b.gamma = CheckTensor(c.param, c.n), b.beta = CheckTensor(c.param, c.n);
  b.dgamma = CheckTensor(c.param, c.n), b.dbeta = CheckTensor(c.param, c.n);
  b.mean = CheckTensor(DType::f32, c.rows), b.rstd = CheckTensor(DType::f32, c.rows);
  b.x.fill_normal(rng, 1.0, 0.5), b.dy.fill_normal(rng);
  b.gamma.fill_normal(rng, 0.5, 1.0), b.beta.fill_normal(rng, 0.5);
  return b;
}

// Forward on a copy of `in`, on the reference kernel or at `isa`; the kernel's name into *kernel.
NormBuffers forward_at(bool reference, Isa isa, const NormCase& c, const NormBuffers& in, std::string* kernel) {
  NormBuffers b = in;
  NormForwardArgs a;
  a.x = view(b.x, {c.rows, c.n}), a.gamma = view(b.gamma, {c.n}), a.y = view(b.y, {c.rows, c.n});
  if (c.kind == NormKind::layer) a.beta = view(b.beta, {c.n}), a.mean = view(b.mean, {c.rows});
  a.rstd = view(b.rstd, {c.rows});
  const auto run = [&] {
    if (kernel) *kernel = norm_kernel_name(c.kind, a);
    c.kind == NormKind::layer ? layer_norm_forward(a) : rms_norm_forward(a);
  };
  reference ? run_reference(run) : run_at(isa, run);
  return b;
}

// Backward on a copy of `in` (whose mean and rstd are the reference forward's), on the reference
// kernel or at `isa`.
NormBuffers backward_at(bool reference, Isa isa, const NormCase& c, const NormBuffers& in, std::string* kernel) {
  NormBuffers b = in;
  NormBackwardArgs a;
  a.dy = view(b.dy, {c.rows, c.n}), a.x = view(b.x, {c.rows, c.n}), a.rstd = view(b.rstd, {c.rows});
  a.gamma = view(b.gamma, {c.n}), a.dx = view(b.dx, {c.rows, c.n}), a.dgamma = view(b.dgamma, {c.n});
  if (c.kind == NormKind::layer) a.mean = view(b.mean, {c.rows}), a.dbeta = view(b.dbeta, {c.n});
  const auto run = [&] {
    if (kernel) *kernel = norm_kernel_name(c.kind, a);
    c.kind == NormKind::layer ? layer_norm_backward(a) : rms_norm_backward(a);
  };
  reference ? run_reference(run) : run_at(isa, run);
  return b;
}

// x-hat of element (r, i) from the reference statistics.
double xhat(const NormCase& c, const NormBuffers& b, std::int64_t r, std::int64_t i) {
  const double mean = c.kind == NormKind::layer ? b.mean.get(r) : 0.0;
  return (b.x.get(r * c.n + i) - mean) * b.rstd.get(r);
}

std::map<std::string, Deviation> compare_forward(const NormCase& c, const NormBuffers& in, const NormBuffers& got,
                                                 const NormBuffers& want) {
  const bool rms = c.kind == NormKind::rms;
  std::map<std::string, Deviation> dev;
  for (std::int64_t r = 0; r < c.rows; ++r) {
    const eb::NormRowBound row = eb::norm_row_bound([&](std::int64_t i) { return in.x.get(r * c.n + i); }, c.n, rms,
                                                    static_cast<double>(NormForwardArgs{}.eps));
    for (std::int64_t i = 0; i < c.n; ++i) {
      const std::int64_t e = r * c.n + i;
      const double beta = rms ? 0.0 : std::fabs(in.beta.get(i));
      dev["y"].add(got.y.get(e), want.y.get(e),
                   eb::norm_y(row, in.x.get(e), std::fabs(in.gamma.get(i)), beta, want.y.get(e), c.x));
    }
    dev["rstd"].add(got.rstd.get(r), want.rstd.get(r), eb::norm_rstd(row));
    if (!rms) dev["mean"].add(got.mean.get(r), want.mean.get(r), eb::norm_mean(row));
  }
  return dev;
}

std::map<std::string, Deviation> compare_backward(const NormCase& c, const NormBuffers& in, const NormBuffers& got,
                                                  const NormBuffers& want) {
  const auto n = static_cast<double>(c.n);
  std::map<std::string, Deviation> dev;
  std::vector<double> sum_dgamma(static_cast<std::size_t>(c.n), 0.0), sum_dbeta(static_cast<std::size_t>(c.n), 0.0);
  for (std::int64_t r = 0; r < c.rows; ++r) {
    double mean_g = 0.0, mean_g_xhat = 0.0;
    for (std::int64_t i = 0; i < c.n; ++i) {
      const double g = std::fabs(in.gamma.get(i) * in.dy.get(r * c.n + i));
      mean_g += g / n;
      mean_g_xhat += g * std::fabs(xhat(c, in, r, i)) / n;
    }
    for (std::int64_t i = 0; i < c.n; ++i) {
      const std::int64_t e = r * c.n + i;
      const double h = std::fabs(xhat(c, in, r, i)), dy = std::fabs(in.dy.get(e));
      dev["dx"].add(got.dx.get(e), want.dx.get(e),
                    eb::norm_dx(c.n, in.rstd.get(r), std::fabs(in.gamma.get(i)) * dy, h, mean_g, mean_g_xhat,
                                want.dx.get(e), c.x));
      sum_dgamma[static_cast<std::size_t>(i)] += dy * h;
      sum_dbeta[static_cast<std::size_t>(i)] += dy;
    }
  }
  for (std::int64_t i = 0; i < c.n; ++i) {
    const double wg = want.dgamma.get(i);
    dev["dgamma"].add(got.dgamma.get(i), wg,
                      eb::norm_param_grad(c.rows, 3.0, sum_dgamma[static_cast<std::size_t>(i)], 0.0, wg, c.param));
    if (c.kind == NormKind::layer) {
      const double wb = want.dbeta.get(i);
      dev["dbeta"].add(got.dbeta.get(i), wb,
                       eb::norm_param_grad(c.rows, 1.0, sum_dbeta[static_cast<std::size_t>(i)], 0.0, wb, c.param));
    }
  }
  return dev;
}

}  // namespace

void check_norms(Isa isa, std::uint64_t seed, bool quick, CheckResults& results) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes =
      quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {3, 7}, {5, 64}, {4, 333}}
            : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1},  {3, 7},    {5, 64},  {4, 333},
                                                                 {9, 56}, {2, 1024}, {3, 4099}};
  std::mt19937_64 rng(seed);
  for (NormKind kind : {NormKind::layer, NormKind::rms})
    for (const auto& [rows, n] : shapes)
      for (const auto& [x, param] :
           {std::pair{DType::f32, DType::f32}, std::pair{DType::bf16, DType::bf16}, std::pair{DType::bf16, DType::f32},
            std::pair{DType::f16, DType::f16}, std::pair{DType::f16, DType::f32}}) {
        const NormCase c{kind, rows, n, x, param};
        const NormBuffers in = make_inputs(c, rng);
        const char* name = kind == NormKind::layer ? "layer_norm" : "rms_norm";
        char what[96];
        std::snprintf(what, sizeof what, "%s %lldx%lld x %s gamma %s", name, static_cast<long long>(rows),
                      static_cast<long long>(n), std::string(dtype_name(x)).c_str(),
                      std::string(dtype_name(param)).c_str());
        std::string kernel;
        const NormBuffers want_f = forward_at(true, isa, c, in, nullptr);
        const NormBuffers got_f = forward_at(false, isa, c, in, &kernel);
        record(results, std::string(name) + "_forward", kernel, what, compare_forward(c, in, got_f, want_f));
        // The backward reads the reference forward's statistics.
        NormBuffers bin = in;
        bin.mean = want_f.mean, bin.rstd = want_f.rstd;
        const NormBuffers want_b = backward_at(true, isa, c, bin, nullptr);
        const NormBuffers got_b = backward_at(false, isa, c, bin, &kernel);
        record(results, std::string(name) + "_backward", kernel, what, compare_backward(c, bin, got_b, want_b));
      }
}

}  // namespace ampkit::tools::check
