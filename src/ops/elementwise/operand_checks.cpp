// Argument checks shared by the front ends of the training-graph ops (ops layer): see
// operand_checks.hpp. Messages are built only when a check fails.
#include "ops/elementwise/operand_checks.hpp"

#include <cmath>
#include <string>

#include "ampkit/core/error.hpp"

namespace ampkit::ops {
namespace {

std::string strides_string(const TensorView& v) {
  std::string s = "[";
  for (int i = 0; i < v.rank; ++i) s += (i ? ", " : "") + std::to_string(v.strides[i]);
  return s + "]";
}

std::string rows_string(const RowsOperand& r) {
  return "[" + std::to_string(r.rows) + ", " + std::to_string(r.n) + "] " + std::string(dtype_name(r.dtype));
}

}  // namespace

std::int64_t RowsOperand::bytes() const {
  if (empty()) return 0;
  return ((rows - 1) * row_stride + n) * static_cast<std::int64_t>(dtype_size(dtype));
}

void check_cpu_operand(const char* fn, const char* name, const TensorView& view) {
  if (!view.present) fail(fn, name, " must be present, but got an absent view");
  if (view.device != Device::cpu)
    fail_with(ErrorKind::unsupported, fn, name, " must be in cpu memory, but got ", view.describe());
  if (view.rank < 0 || view.rank > kMaxRank)
    fail(fn, name, " rank must be in [0, ", kMaxRank, "], but got ", view.rank);
}

void check_float_operand(const char* fn, const char* name, const TensorView& view) {
  check_cpu_operand(fn, name, view);
  if (!is_float_dtype(view.dtype)) fail(fn, name, " dtype must be f32, bf16 or f16, but got ", dtype_name(view.dtype));
}

void check_dtype(const char* fn, const char* name, const TensorView& view, DType want) {
  check_cpu_operand(fn, name, view);
  if (view.dtype != want) fail(fn, name, " dtype must be ", dtype_name(want), ", but got ", dtype_name(view.dtype));
}

void check_rank(const char* fn, const char* name, const TensorView& view, int rank) {
  if (view.rank != rank) fail(fn, name, " must have rank ", rank, ", but got shape ", view.shape_string());
}

void check_same_shape(const char* fn, const char* a_name, const TensorView& a, const char* b_name,
                      const TensorView& b) {
  bool same = a.rank == b.rank;
  for (int i = 0; same && i < a.rank; ++i) same = a.shape[i] == b.shape[i];
  if (!same)
    fail(fn, b_name, " shape must equal ", a_name, "'s shape ", a.shape_string(), ", but got ", b.shape_string());
}

RowsOperand as_rows(const char* fn, const char* name, const TensorView& view) {
  RowsOperand r;
  r.data = view.data;
  r.dtype = view.dtype;
  const std::int64_t numel = view.numel();  // throws on overflow
  const int last = view.rank - 1;
  r.n = view.rank == 0 ? 1 : view.shape[last];
  r.rows = r.n == 0 ? 0 : numel / r.n;
  if (view.rank >= 1 && view.shape[last] == 0) {
    r.rows = 1;
    for (int i = 0; i < last; ++i) r.rows *= view.shape[i];
  }
  r.row_stride = r.n;
  for (int i = 0; i < view.rank; ++i)
    if (view.strides[i] < 0)
      fail(fn, name, " strides must be >= 0, but got ", strides_string(view), " for shape ", view.shape_string());
  if (numel == 0) return r;
  if (view.data == nullptr)
    fail(fn, name, " must point to its ", numel, " elements, but got null data for ", view.describe());
  if (view.rank >= 1 && view.shape[last] > 1 && view.strides[last] != 1)
    fail(fn, name, " last dim must be contiguous (stride 1), but got strides ", strides_string(view), " for shape ",
         view.shape_string());
  // Leading dims: the innermost one of size > 1 gives the row stride; each outer one of size > 1
  // must step over all the rows inside it.
  std::int64_t inner_stride = -1, inner_rows = 1;
  for (int i = last - 1; i >= 0; --i) {
    if (view.shape[i] == 1) continue;
    if (inner_stride < 0) {
      r.row_stride = view.strides[i];
    } else if (view.strides[i] != inner_stride * inner_rows) {
      fail(fn, name, " leading dims must collapse to rows of one stride, but got strides ", strides_string(view),
           " for shape ", view.shape_string());
    }
    if (inner_stride < 0) inner_stride = view.strides[i];
    inner_rows *= view.shape[i];
  }
  if (r.rows > 1 && r.row_stride < r.n)
    fail(fn, name, " rows must not overlap (row stride >= ", r.n, "), but got strides ", strides_string(view),
         " for shape ", view.shape_string());
  return r;
}

RowsOperand as_flat(const char* fn, const char* name, const TensorView& view) {
  const std::int64_t numel = view.numel();
  if (!view.is_contiguous())
    fail(fn, name, " must be contiguous, but got strides ", strides_string(view), " for shape ", view.shape_string());
  if (numel > 0 && view.data == nullptr)
    fail(fn, name, " must point to its ", numel, " elements, but got null data for ", view.describe());
  RowsOperand r;
  r.data = view.data;
  r.dtype = view.dtype;
  r.rows = numel == 0 ? 0 : 1;
  r.n = numel;
  r.row_stride = numel;
  return r;
}

void check_disjoint(const char* fn, const char* out_name, const RowsOperand& out, const char* in_name,
                    const RowsOperand& in) {
  if (ranges_overlap(out.data, out.bytes(), in.data, in.bytes()))
    fail(fn, out_name, " (", rows_string(out), ") must not overlap ", in_name, " (", rows_string(in),
         "), but their memory ranges overlap");
}

void check_disjoint_or_same(const char* fn, const char* out_name, const RowsOperand& out, const char* in_name,
                            const RowsOperand& in) {
  const bool same = out.data == in.data && out.dtype == in.dtype && out.rows == in.rows && out.n == in.n &&
                    (out.rows <= 1 || out.row_stride == in.row_stride);
  if (same || !ranges_overlap(out.data, out.bytes(), in.data, in.bytes())) return;
  fail(fn, out_name, " (", rows_string(out), ") must be exactly ", in_name,
       " (in place) or not overlap it, but their memory ranges partly overlap");
}

void check_finite(const char* fn, const char* name, float value) {
  if (!std::isfinite(value)) fail(fn, name, " must be finite, but got ", value);
}

}  // namespace ampkit::ops
