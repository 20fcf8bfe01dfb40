// LayerNorm/RMSNorm argument validation (ops layer): decodes the TensorView operands of a
// forward or backward call into a kernel problem (rows, n, pointers, dtypes), checking every
// view (structure, shape against x or dy, dtype, null, overlap) with messages in the call's own
// words. Nothing is allocated on an accepted call. Called by norm_front_end.cpp.
#include <cmath>
#include <cstdint>
#include <limits>

#include "ampkit/core/error.hpp"
#include "core/checked_math.hpp"
#include "ops/norm/norm_front_end.hpp"
#include "ops/operand_checks.hpp"

namespace ampkit::ops {
namespace {

// max(rows, 1) * n * 8 must fit in int64: byte offsets of rows and of the kernels' fp32 and
// fp64 row scratch, with room to spare.
constexpr std::int64_t kMaxElements = std::numeric_limits<std::int64_t>::max() / 8;

// How a [..., n] operand splits into rows and the normalized n.
struct RowShape {
  std::int64_t rows = 0;
  std::int64_t n = 0;
  int lead = 0;  // number of leading (row) dims
};

RowShape decode_rows(const char* fn, const char* name, const TensorView& v, int normalized_rank) {
  if (normalized_rank < 1 || normalized_rank > v.rank)
    fail(fn, "normalized_rank must be in [1, ", name, "'s rank ", v.rank, "], but got ", normalized_rank, " (", name,
         " has shape ", v.shape_string(), ")");
  RowShape s;
  s.lead = v.rank - normalized_rank;
  std::int64_t rows = 1, n = 1;
  for (int i = 0; i < v.rank; ++i) {
    std::int64_t& f = i < s.lead ? rows : n;
    const auto next = checked_mul(f, v.shape[i]);
    if (!next) fail(fn, name, " ", v.shape_string(), " has more rows or columns than int64 can count");
    f = *next;
  }
  if (n < 1)
    fail(fn, "n must be >= 1, but got 0 (", name, " has shape ", v.shape_string(), ", normalized_rank ",
         normalized_rank, ")");
  if ((rows > 1 ? rows : 1) > kMaxElements / n)
    fail(fn, name, " ", v.shape_string(), " is too large: rows * n (rows counted as at least 1) ", "must be at most ",
         kMaxElements, " elements, but got rows = ", rows, ", n = ", n);
  s.rows = rows;
  s.n = n;
  return s;
}

// A parameter-like operand: the normalized dims of `ref` (named ref_name).
void check_param_shape(const char* fn, const char* name, const TensorView& v, const TensorView& ref, const RowShape& s,
                       const char* what) {
  check_shape(fn, name, v, ref.shape.data() + s.lead, ref.rank - s.lead, what);
}

// mean / rstd: f32, [rows] or ref's leading dims.
std::int64_t check_stats(const char* fn, const char* name, const TensorView& v, const TensorView& ref,
                         const char* ref_name, const RowShape& s, Stage stage) {
  const std::int64_t bytes = check_float_view_on(fn, name, v, ref.device, ref.device_index, ref_name, stage);
  if (v.dtype != DType::f32) fail(fn, name, " dtype must be f32, but got ", dtype_name(v.dtype));
  if (!has_shape(v, &s.rows, 1) && !has_shape(v, ref.shape.data(), s.lead))
    fail(fn, name, " must have shape [", s.rows, "] (one value per row of ", ref_name, ") or ", ref_name,
         "'s leading dims, but got ", v.shape_string());
  return bytes;
}

void check_kind(const char* fn, NormKind kind) {
  if (kind != NormKind::layer && kind != NormKind::rms)
    fail(fn, "kind must be layer or rms, but got the value ", static_cast<int>(kind));
}

}  // namespace

ops::NormForwardProblem validate_norm_forward(const char* fn, NormKind kind, const NormForwardArgs& a, Stage stage) {
  check_kind(fn, kind);
  const bool rms = kind == NormKind::rms;
  check_given(fn, "x", a.x, "the input [..., n]");
  // Every operand on x's device (cpu, or one GPU: the CUDA kernel lists then run the call).
  const Device dev = a.x.device;
  const int dev_index = a.x.device_index;
  const auto view = [&](const char* name, const TensorView& v) {
    return check_float_view_on(fn, name, v, dev, dev_index, "x", stage);
  };
  const std::int64_t x_bytes = view("x", a.x);
  const RowShape s = decode_rows(fn, "x", a.x, a.normalized_rank);
  const DType xt = a.x.dtype;
  check_given(fn, "y", a.y, "the output, x's shape");
  const std::int64_t y_bytes = view("y", a.y);
  check_shape(fn, "y", a.y, a.x.shape.data(), a.x.rank, "x's shape");
  check_dtype_is(fn, "y", a.y, xt, "x's dtype");
  if (rms && a.beta.present)
    fail(fn, "beta must be absent for RMSNorm, which has no shift, but got ", a.beta.describe());
  if (rms && a.mean.present)
    fail(fn, "mean must be absent for RMSNorm, which has no mean, but got ", a.mean.describe());
  std::int64_t gamma_bytes = 0, beta_bytes = 0, mean_bytes = 0, rstd_bytes = 0;
  if (a.gamma.present) {
    gamma_bytes = view("gamma", a.gamma);
    check_param_shape(fn, "gamma", a.gamma, a.x, s, "x's normalized dims");
    check_dtype_or_f32(fn, "gamma", a.gamma, xt, "x's dtype");
  }
  if (a.beta.present) {
    beta_bytes = view("beta", a.beta);
    check_param_shape(fn, "beta", a.beta, a.x, s, "x's normalized dims");
    if (a.gamma.present)
      check_dtype_is(fn, "beta", a.beta, a.gamma.dtype, "gamma's dtype");
    else
      check_dtype_or_f32(fn, "beta", a.beta, xt, "x's dtype");
  }
  if (a.mean.present) mean_bytes = check_stats(fn, "mean", a.mean, a.x, "x", s, stage);
  if (a.rstd.present) rstd_bytes = check_stats(fn, "rstd", a.rstd, a.x, "x", s, stage);
  if (!std::isfinite(a.eps) || a.eps < 0.0f) fail(fn, "eps must be finite and >= 0, but got ", a.eps);
  check_data(fn, "x", a.x, "elements", stage);
  check_data(fn, "y", a.y, "elements", stage);
  if (a.gamma.present) check_data(fn, "gamma", a.gamma, "elements", stage);
  if (a.beta.present) check_data(fn, "beta", a.beta, "elements", stage);
  if (a.mean.present) check_data(fn, "mean", a.mean, "elements", stage);
  if (a.rstd.present) check_data(fn, "rstd", a.rstd, "elements", stage);
  OverlapCheck overlap(fn, stage);
  overlap.add("x", a.x, x_bytes, false);
  overlap.add("gamma", a.gamma, gamma_bytes, false);
  overlap.add("beta", a.beta, beta_bytes, false);
  overlap.add("y", a.y, y_bytes, true);
  overlap.add("mean", a.mean, mean_bytes, true);
  overlap.add("rstd", a.rstd, rstd_bytes, true);
  overlap.run();

  ops::NormForwardProblem p;
  p.device = dev;
  p.device_index = dev_index;
  p.rows = s.rows;
  p.n = s.n;
  p.x = a.x.data;
  p.x_dtype = xt;
  p.gamma = a.gamma.present ? a.gamma.data : nullptr;
  p.beta = a.beta.present ? a.beta.data : nullptr;
  p.param_dtype = a.gamma.present ? a.gamma.dtype : a.beta.present ? a.beta.dtype : xt;
  p.eps = a.eps;
  p.y = a.y.data;
  p.mean = a.mean.present ? static_cast<float*>(a.mean.data) : nullptr;
  p.rstd = a.rstd.present ? static_cast<float*>(a.rstd.data) : nullptr;
  return p;
}

// Choices (docs/NUMERICS.md): dx, dgamma, dbeta are each optional (none: nothing to do, dy may
// then be absent too); dgamma needs gamma (a forward without gamma has no scale to
// differentiate, and a forgotten gamma would also make dx wrong); gamma, dgamma and dbeta share
// one parameter dtype; dy is needed for any output, x, rstd (and mean for LayerNorm) for dx and
// dgamma when there are rows; dbeta alone needs dy only.
ops::NormBackwardProblem validate_norm_backward(const char* fn, NormKind kind, const NormBackwardArgs& a, Stage stage) {
  check_kind(fn, kind);
  const bool rms = kind == NormKind::rms;
  if (rms && a.dbeta.present)
    fail(fn, "dbeta must be absent for RMSNorm, which has no beta, but got ", a.dbeta.describe());
  if (rms && a.mean.present)
    fail(fn, "mean must be absent for RMSNorm, which has no mean, but got ", a.mean.describe());
  const bool need_x = a.dx.present || a.dgamma.present;
  const bool any_output = need_x || a.dbeta.present;
  ops::NormBackwardProblem p;
  if (!a.dy.present) {
    if (any_output) check_given(fn, "dy", a.dy, "the gradient of y, [..., n]");
    // Nothing requested: nothing to do; the operands given must still be well-formed views.
    for (const auto& [name, v] :
         {std::pair{"x", &a.x}, std::pair{"mean", &a.mean}, std::pair{"rstd", &a.rstd}, std::pair{"gamma", &a.gamma}})
      if (v->present) check_float_view_on(fn, name, *v, v->device, v->device_index, name, stage);
    return p;
  }
  // Every operand on dy's device (cpu, or one GPU: the CUDA kernel lists then run the call).
  const Device dev = a.dy.device;
  const int dev_index = a.dy.device_index;
  const auto view = [&](const char* name, const TensorView& v) {
    return check_float_view_on(fn, name, v, dev, dev_index, "dy", stage);
  };
  const std::int64_t dy_bytes = view("dy", a.dy);
  const RowShape s = decode_rows(fn, "dy", a.dy, a.normalized_rank);
  const DType xt = a.dy.dtype;
  std::int64_t x_bytes = 0, dx_bytes = 0, mean_bytes = 0, rstd_bytes = 0;
  if (a.x.present) {
    x_bytes = view("x", a.x);
    check_shape(fn, "x", a.x, a.dy.shape.data(), a.dy.rank, "dy's shape");
    check_dtype_is(fn, "x", a.x, xt, "dy's dtype");
  }
  if (a.dx.present) {
    dx_bytes = view("dx", a.dx);
    check_shape(fn, "dx", a.dx, a.dy.shape.data(), a.dy.rank, "dy's shape");
    check_dtype_is(fn, "dx", a.dx, xt, "dy's dtype");
  }
  if (a.dgamma.present && !a.gamma.present) fail(fn, "dgamma needs gamma (the forward's scale), but gamma is absent");
  // gamma, dgamma, dbeta: dy's normalized dims; the first present one sets the dtype.
  const TensorView* params[] = {&a.gamma, &a.dgamma, &a.dbeta};
  const char* names[] = {"gamma", "dgamma", "dbeta"};
  std::int64_t param_bytes[3] = {0, 0, 0};
  DType pt = xt;
  const char* first = nullptr;
  for (int i = 0; i < 3; ++i) {
    const TensorView& v = *params[i];
    if (!v.present) continue;
    param_bytes[i] = view(names[i], v);
    check_param_shape(fn, names[i], v, a.dy, s, "dy's normalized dims");
    if (first == nullptr) {
      check_dtype_or_f32(fn, names[i], v, xt, "dy's dtype");
      first = names[i];
      pt = v.dtype;
    } else {
      const char* want = first == names[0] ? "gamma's dtype" : "dgamma's dtype";
      check_dtype_is(fn, names[i], v, pt, want);
    }
  }
  if (a.mean.present) mean_bytes = check_stats(fn, "mean", a.mean, a.dy, "dy", s, stage);
  if (a.rstd.present) rstd_bytes = check_stats(fn, "rstd", a.rstd, a.dy, "dy", s, stage);
  if (s.rows > 0 && any_output) {
    check_data(fn, "dy", a.dy, "elements", stage);
    if (need_x) {
      const char* why = a.dx.present ? "needed for dx" : "needed for dgamma";
      check_given(fn, "x", a.x, why);
      check_data(fn, "x", a.x, a.dx.present ? "elements (needed for dx)" : "elements (needed for dgamma)", stage);
      const char* stat =
          a.dx.present ? "values from the forward (needed for dx)" : "values from the forward (needed for dgamma)";
      const char* stat_given =
          a.dx.present ? "values from the forward, needed for dx" : "values from the forward, needed for dgamma";
      if (!rms) {
        check_given(fn, "mean", a.mean, stat_given);
        check_data(fn, "mean", a.mean, stat, stage);
      }
      check_given(fn, "rstd", a.rstd, stat_given);
      check_data(fn, "rstd", a.rstd, stat, stage);
    }
  }
  if (a.dx.present) check_data(fn, "dx", a.dx, "elements", stage);
  for (int i = 0; i < 3; ++i)
    if (params[i]->present) check_data(fn, names[i], *params[i], "elements", stage);
  OverlapCheck overlap(fn, stage);
  overlap.add("dy", a.dy, dy_bytes, false);
  overlap.add("x", a.x, x_bytes, false);
  overlap.add("mean", a.mean, mean_bytes, false);
  overlap.add("rstd", a.rstd, rstd_bytes, false);
  overlap.add("gamma", a.gamma, param_bytes[0], false);
  overlap.add("dx", a.dx, dx_bytes, true);
  overlap.add("dgamma", a.dgamma, param_bytes[1], true);
  overlap.add("dbeta", a.dbeta, param_bytes[2], true);
  overlap.run();

  const auto data = [](const TensorView& v) { return v.present ? v.data : nullptr; };
  p.device = dev;
  p.device_index = dev_index;
  p.rows = s.rows;
  p.n = s.n;
  p.dy = a.dy.data;
  p.x = need_x ? data(a.x) : nullptr;
  p.x_dtype = xt;
  p.mean = need_x && !rms ? static_cast<const float*>(data(a.mean)) : nullptr;
  p.rstd = need_x ? static_cast<const float*>(data(a.rstd)) : nullptr;
  p.gamma = data(a.gamma);
  p.param_dtype = pt;
  p.dx = data(a.dx);
  p.dgamma = data(a.dgamma);
  p.dbeta = data(a.dbeta);
  p.accumulate = a.accumulate;
  return p;
}

}  // namespace ampkit::ops
