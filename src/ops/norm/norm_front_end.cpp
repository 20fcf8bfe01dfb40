// LayerNorm/RMSNorm front end (kernels layer): validates every argument of the four public
// calls (include/ampkit/norm.hpp), handles rows = 0, then runs the first usable kernel of
// norm_kernels() once per call. Nothing is written when an argument is rejected.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/norm.hpp"
#include "ampkit/core/tensor.hpp"
#include "cpu/norm/norm_kernels.hpp"

namespace ampkit {
namespace {

// rows * n * 8 must fit in int64 (byte offsets of the largest dtype, with room to spare).
constexpr std::int64_t kMaxElements = std::numeric_limits<std::int64_t>::max() / 8;

bool valid_dtype(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

void check_sizes(const char* fn, std::int64_t rows, std::int64_t n) {
  if (rows < 0) fail(fn, "rows must be >= 0, but got ", rows);
  if (n < 1) fail(fn, "n must be >= 1, but got ", n);
  if (rows > 0 && n > kMaxElements / rows)
    fail(fn, "rows * n must be at most ", kMaxElements, " elements, but got rows = ", rows,
         ", n = ", n);
}

void check_dtype_valid(const char* fn, const char* name, DType t) {
  if (!valid_dtype(t))
    fail(fn, name, " dtype must be f32, bf16 or f16, but got the value ", static_cast<int>(t));
}

// `name` (present) must have dtype `want`, described as `want_text` ("x's dtype").
void check_same_dtype(const char* fn, const char* name, DType got, const char* want_text,
                      DType want) {
  check_dtype_valid(fn, name, got);
  if (got != want)
    fail(fn, name, " dtype must equal ", want_text, " (", dtype_name(want), "), but got ",
         dtype_name(got));
}

// A parameter-like operand: x's dtype or f32.
void check_param_dtype(const char* fn, const char* name, DType got, const char* x_text,
                       DType x) {
  check_dtype_valid(fn, name, got);
  if (got != x && got != DType::f32)
    fail(fn, name, " dtype must be ", x_text, " (", dtype_name(x), ") or f32, but got ",
         dtype_name(got));
}

// Describes an operand for a message: "[3, 4] bf16" (rows < 0: a vector "[4] f32").
std::string describe(std::int64_t rows, std::int64_t n, DType t) {
  std::string s = "[";
  if (rows >= 0) s += std::to_string(rows) + ", ";
  return s + std::to_string(n) + "] " + std::string(dtype_name(t));
}

void check_present(const char* fn, const char* name, const void* p, std::int64_t rows,
                   std::int64_t n, DType t, const char* why) {
  if (p == nullptr)
    fail(fn, name, " must point to ", describe(rows, n, t), " ", why, ", but got null");
}

// The byte ranges of one call's operands; every output must be disjoint from every other range.
// Messages are built only on failure (no allocation on the accepted path).
class OverlapCheck {
 public:
  explicit OverlapCheck(const char* fn) : fn_(fn) {}
  // rows < 0: a vector of n elements.
  void add(const char* name, const void* p, std::int64_t rows, std::int64_t n, DType t,
           bool output) {
    const std::int64_t elements = rows < 0 ? n : rows * n;
    const std::int64_t bytes = elements * static_cast<std::int64_t>(dtype_size(t));
    if (p == nullptr || bytes <= 0) return;
    ranges_[count_++] = {name, p, bytes, rows, n, t, output};
  }
  void run() const {
    for (int i = 0; i < count_; ++i) {
      for (int j = 0; j < count_; ++j) {
        const Range &a = ranges_[i], &b = ranges_[j];
        if (i == j || !a.output || (b.output && j < i)) continue;
        if (ranges_overlap(a.p, a.bytes, b.p, b.bytes))
          fail(fn_, a.name, " (", describe(a.rows, a.n, a.dtype), ") must not overlap ", b.name,
               " (", describe(b.rows, b.n, b.dtype), "), but their memory ranges overlap");
      }
    }
  }

 private:
  struct Range {
    const char* name;
    const void* p;
    std::int64_t bytes;
    std::int64_t rows;
    std::int64_t n;
    DType dtype;
    bool output;
  };
  const char* fn_;
  Range ranges_[8] = {};
  int count_ = 0;
};

std::int64_t bytes(std::int64_t elements, DType t) {
  return elements * static_cast<std::int64_t>(dtype_size(t));
}

// Validates a forward call and turns it into a kernel problem.
cpu::NormForwardProblem validate_forward(const char* fn, const NormForwardArgs& a, bool rms) {
  check_sizes(fn, a.rows, a.n);
  check_dtype_valid(fn, "x", a.x.dtype);
  const DType xt = a.x.dtype;
  if (a.y.data) check_same_dtype(fn, "y", a.y.dtype, "x's dtype", xt);
  if (a.gamma.data) check_param_dtype(fn, "gamma", a.gamma.dtype, "x's dtype", xt);
  if (rms && a.beta.data)
    fail(fn, "beta must be absent (null) for RMSNorm, which has no shift, but got a pointer");
  if (rms && a.mean)
    fail(fn, "mean must be absent (null) for RMSNorm, which has no mean, but got a pointer");
  if (a.beta.data) {
    if (a.gamma.data)
      check_same_dtype(fn, "beta", a.beta.dtype, "gamma's dtype", a.gamma.dtype);
    else
      check_param_dtype(fn, "beta", a.beta.dtype, "x's dtype", xt);
  }
  if (!std::isfinite(a.eps) || a.eps < 0.0f)
    fail(fn, "eps must be finite and >= 0, but got ", a.eps);
  const std::int64_t rows = a.rows, n = a.n;
  if (rows > 0) {
    check_present(fn, "x", a.x.data, rows, n, xt, "elements");
    check_present(fn, "y", a.y.data, rows, n, xt, "elements");
  }
  const DType pt = a.gamma.data ? a.gamma.dtype : a.beta.data ? a.beta.dtype : xt;
  OverlapCheck overlap(fn);
  overlap.add("x", a.x.data, rows, n, xt, false);
  overlap.add("gamma", a.gamma.data, -1, n, pt, false);
  overlap.add("beta", a.beta.data, -1, n, pt, false);
  overlap.add("y", a.y.data, rows, n, xt, true);
  overlap.add("mean", a.mean, -1, rows, DType::f32, true);
  overlap.add("rstd", a.rstd, -1, rows, DType::f32, true);
  overlap.run();

  cpu::NormForwardProblem p;
  p.rows = rows;
  p.n = n;
  p.x = a.x.data;
  p.x_dtype = xt;
  p.gamma = a.gamma.data;
  p.beta = a.beta.data;
  p.param_dtype = pt;
  p.eps = a.eps;
  p.y = a.y.data;
  p.mean = a.mean;
  p.rstd = a.rstd;
  return p;
}

// Validates a backward call and turns it into a kernel problem. Choices (docs/NUMERICS.md):
// dx, dgamma, dbeta are each optional (none: nothing to do); dgamma needs gamma (a forward
// without gamma has no scale to differentiate, and a forgotten gamma would also make dx wrong);
// gamma, dgamma and dbeta share one parameter dtype; dy is needed for any output, x, rstd (and
// mean for LayerNorm) for dx and dgamma; dbeta alone needs dy only.
cpu::NormBackwardProblem validate_backward(const char* fn, const NormBackwardArgs& a, bool rms) {
  check_sizes(fn, a.rows, a.n);
  check_dtype_valid(fn, "dy", a.dy.dtype);
  const DType xt = a.dy.dtype;
  if (a.x.data) check_same_dtype(fn, "x", a.x.dtype, "dy's dtype", xt);
  if (a.dx.data) check_same_dtype(fn, "dx", a.dx.dtype, "dy's dtype", xt);
  if (rms && a.dbeta.data)
    fail(fn, "dbeta must be absent (null) for RMSNorm, which has no beta, but got a pointer");
  if (rms && a.mean)
    fail(fn, "mean must be absent (null) for RMSNorm, which has no mean, but got a pointer");
  if (a.dgamma.data && !a.gamma.data)
    fail(fn, "dgamma needs gamma (the forward's scale), but gamma is null");
  DType pt = xt;
  const char* param_name = nullptr;
  for (const auto& [name, present, t] :
       {std::tuple{"gamma", a.gamma.data != nullptr, a.gamma.dtype},
        std::tuple{"dgamma", a.dgamma.data != nullptr, a.dgamma.dtype},
        std::tuple{"dbeta", a.dbeta.data != nullptr, a.dbeta.dtype}}) {
    if (!present) continue;
    if (param_name == nullptr) {
      check_param_dtype(fn, name, t, "dy's dtype", xt);
      param_name = name;
      pt = t;
    } else {
      const std::string want = std::string(param_name) + "'s dtype";
      check_same_dtype(fn, name, t, want.c_str(), pt);
    }
  }
  const std::int64_t rows = a.rows, n = a.n;
  const bool need_x = a.dx.data != nullptr || a.dgamma.data != nullptr;
  const bool any_output = need_x || a.dbeta.data != nullptr;
  if (rows > 0 && any_output) {
    check_present(fn, "dy", a.dy.data, rows, n, xt, "elements");
    if (need_x) {
      const char* why = a.dx.data ? "elements (needed for dx)" : "elements (needed for dgamma)";
      check_present(fn, "x", a.x.data, rows, n, xt, why);
      const char* stat = a.dx.data ? "values from the forward (needed for dx)"
                                   : "values from the forward (needed for dgamma)";
      if (!rms) check_present(fn, "mean", a.mean, -1, rows, DType::f32, stat);
      check_present(fn, "rstd", a.rstd, -1, rows, DType::f32, stat);
    }
  }
  OverlapCheck overlap(fn);
  overlap.add("dy", a.dy.data, rows, n, xt, false);
  overlap.add("x", a.x.data, rows, n, xt, false);
  overlap.add("mean", a.mean, -1, rows, DType::f32, false);
  overlap.add("rstd", a.rstd, -1, rows, DType::f32, false);
  overlap.add("gamma", a.gamma.data, -1, n, pt, false);
  overlap.add("dx", a.dx.data, rows, n, xt, true);
  overlap.add("dgamma", a.dgamma.data, -1, n, pt, true);
  overlap.add("dbeta", a.dbeta.data, -1, n, pt, true);
  overlap.run();

  cpu::NormBackwardProblem p;
  p.rows = rows;
  p.n = n;
  p.dy = a.dy.data;
  p.x = need_x ? a.x.data : nullptr;
  p.x_dtype = xt;
  p.mean = need_x && !rms ? a.mean : nullptr;
  p.rstd = need_x ? a.rstd : nullptr;
  p.gamma = a.gamma.data;
  p.param_dtype = pt;
  p.dx = a.dx.data;
  p.dgamma = a.dgamma.data;
  p.dbeta = a.dbeta.data;
  p.accumulate = a.accumulate;
  return p;
}

void run_forward(const char* fn, const NormForwardArgs& args, bool rms) {
  const cpu::NormForwardProblem p = validate_forward(fn, args, rms);
  if (p.rows == 0) return;
  const cpu::NormKernel& k = cpu::selected_norm_kernel();
  (rms ? k.rms_forward : k.layer_forward)(p);
}

void run_backward(const char* fn, const NormBackwardArgs& args, bool rms) {
  const cpu::NormBackwardProblem p = validate_backward(fn, args, rms);
  if (p.dx == nullptr && p.dgamma == nullptr && p.dbeta == nullptr) return;
  if (p.rows == 0) {  // sums over no rows: 0, or unchanged when accumulating
    if (!p.accumulate) {
      const std::size_t size = static_cast<std::size_t>(bytes(p.n, p.param_dtype));
      if (p.dgamma) std::memset(p.dgamma, 0, size);  // all-zero bits are +0 in every dtype
      if (p.dbeta) std::memset(p.dbeta, 0, size);
    }
    return;
  }
  const cpu::NormKernel& k = cpu::selected_norm_kernel();
  (rms ? k.rms_backward : k.layer_backward)(p);
}

}  // namespace

void layer_norm_forward(const NormForwardArgs& args) {
  run_forward("layer_norm_forward", args, false);
}
void layer_norm_backward(const NormBackwardArgs& args) {
  run_backward("layer_norm_backward", args, false);
}
void rms_norm_forward(const NormForwardArgs& args) { run_forward("rms_norm_forward", args, true); }
void rms_norm_backward(const NormBackwardArgs& args) {
  run_backward("rms_norm_backward", args, true);
}

}  // namespace ampkit
