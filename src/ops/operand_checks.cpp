// Checks of TensorView operands shared by the op and layer front ends (ops layer): contiguous
// views and strided rows (operand_checks.hpp), each failing with a message in the caller's words.
#include "ops/operand_checks.hpp"

#include <cmath>
#include <cstdint>
#include <string>

#include "ampkit/core/error.hpp"
#include "core/checked_math.hpp"
#include "ops/backend.hpp"

namespace ampkit::ops {
namespace {

std::string strides_string(const TensorView& v) {
  std::string s = "[";
  for (int i = 0; i < v.rank; ++i) s += (i ? ", " : "") + std::to_string(v.strides[i]);
  return s + "]";
}

std::string rows_string(const RowsOperand& r) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string chains.
  std::string s = "[";
  s += std::to_string(r.rows);
  s += ", ";
  s += std::to_string(r.n);
  s += "] ";
  s += dtype_name(r.dtype);
  return s;
}

std::string dims_string(const std::int64_t* dims, int rank) {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string dtype_text(DType t) {
  const std::string_view name = dtype_name(t);
  if (name == "?") return "the value " + std::to_string(static_cast<int>(t));
  return std::string(name);
}

}  // namespace

std::int64_t check_float_view(const char* fn, const char* name, const TensorView& v) {
  if (v.rank < 0 || v.rank > kMaxRank) fail(fn, name, " rank must be in [0, ", kMaxRank, "], but got ", v.rank);
  for (int i = 0; i < v.rank; ++i)
    if (v.shape[i] < 0) fail(fn, name, " dimension ", i, " must be >= 0, but got ", v.shape[i]);
  if (!is_float_dtype(v.dtype)) fail(fn, name, " dtype must be f32, bf16 or f16, but got ", dtype_text(v.dtype));
  if (v.device != Device::cpu)
    fail_with(ErrorKind::unsupported, fn, name, " is in ", device_name(v.device), ":", v.device_index,
              " memory, but this build runs on the cpu only");
  std::int64_t count = 1;
  for (int i = 0; i < v.rank; ++i) {
    const auto next = checked_mul(count, v.shape[i]);
    if (!next) fail(fn, name, " ", v.shape_string(), " has more elements than int64 can count");
    count = *next;
  }
  const auto bytes = checked_mul(count, static_cast<std::int64_t>(dtype_size(v.dtype)));
  if (!bytes) fail(fn, name, " ", v.describe(), " is too large: its byte size overflows int64");
  if (count > 0 && !v.is_contiguous())  // a view without elements has no layout to check
    fail(fn, name, " must be row-major contiguous, but its shape ", v.shape_string(), " has strides ",
         dims_string(v.strides.data(), v.rank));
  return *bytes;
}

namespace {

// "cpu" or "cuda:<index>".
std::string device_text(Device d, int index) {
  return d == Device::cuda ? "cuda:" + std::to_string(index) : std::string(device_name(d));
}

// v's device is the cpu or a usable GPU, and it is `device` (of the operand `owner`).
void check_device(const char* fn, const char* name, const TensorView& v, Device device, int device_index,
                  const char* owner) {
  if (v.device == Device::cuda) {
    if (const char* why = backend(Device::cuda).unavailable())
      fail_with(ErrorKind::unsupported, fn, name, " is in cuda:", v.device_index, " memory, but ", why);
    if (v.device_index < 0 || v.device_index >= backend(Device::cuda).usable_devices())
      fail(fn, name, " is on cuda:", v.device_index, ", but this machine has ", backend(Device::cuda).usable_devices(),
           " CUDA device(s)");
  } else if (v.device != Device::cpu) {
    fail(fn, name, " device must be cpu or cuda, but got the value ", static_cast<int>(v.device));
  }
  if (v.device != device || (device == Device::cuda && v.device_index != device_index))
    fail(fn, name, " is in ", device_text(v.device, v.device_index), " memory, but ", owner, " is in ",
         device_text(device, device_index), " memory: every operand of one call must be on one device");
}

// On a GPU, `bytes` from `data` must be device memory of that GPU.
void check_device_pointer(const char* fn, const char* name, const void* data, std::int64_t bytes, Device device,
                          int device_index) {
  if (device == Device::cuda && data != nullptr && bytes > 0)
    if (const char* why = backend(device).pointer_problem(data, device_index))
      fail(fn, name, " must point to device memory of cuda:", device_index, " (its view says so), but it points to ",
           why);
}

}  // namespace

std::int64_t check_float_view_on(const char* fn, const char* name, const TensorView& v, Device device, int device_index,
                                 const char* owner, Stage stage) {
  check_device(fn, name, v, device, device_index, owner);
  TensorView host = v;  // the structure checks are the same on every device
  host.device = Device::cpu;
  const std::int64_t bytes = check_float_view(fn, name, host);
  if (stage == Stage::call) check_device_pointer(fn, name, v.data, bytes, v.device, v.device_index);
  return bytes;
}

void check_given(const char* fn, const char* name, const TensorView& v, const char* what) {
  if (!v.present) fail(fn, name, " must be given (", what, "), but it is absent");
}

void check_data(const char* fn, const char* name, const TensorView& v, const char* what, Stage stage) {
  if (stage == Stage::descriptor || v.data != nullptr) return;
  for (int i = 0; i < v.rank; ++i)
    if (v.shape[i] == 0) return;
  fail(fn, name, " must point to ", v.describe(), " ", what, ", but got null");
}

bool has_shape(const TensorView& v, const std::int64_t* dims, int rank) {
  if (v.rank != rank) return false;
  for (int i = 0; i < rank; ++i)
    if (v.shape[i] != dims[i]) return false;
  return true;
}

void check_shape(const char* fn, const char* name, const TensorView& v, const std::int64_t* dims, int rank,
                 const char* what) {
  if (!has_shape(v, dims, rank))
    fail(fn, name, " must have ", what, " ", dims_string(dims, rank), ", but got ", v.shape_string());
}

void check_dtype_is(const char* fn, const char* name, const TensorView& v, DType want, const char* want_text) {
  if (v.dtype != want)
    fail(fn, name, " dtype must equal ", want_text, " (", dtype_name(want), "), but got ", dtype_text(v.dtype));
}

void check_dtype_or_f32(const char* fn, const char* name, const TensorView& v, DType owner, const char* owner_text) {
  if (v.dtype != owner && v.dtype != DType::f32)
    fail(fn, name, " dtype must be ", owner_text, " (", dtype_name(owner), ") or f32, but got ", dtype_text(v.dtype));
}

void OverlapCheck::add(const char* name, const TensorView& v, std::int64_t bytes, bool output) {
  if (stage_ == Stage::descriptor || !v.present || v.data == nullptr || bytes <= 0) return;
  if (count_ == kMaxOperands) fail_with(ErrorKind::internal, fn_, "too many operands to check");
  ranges_[count_++] = {name, &v, bytes, output};
}

void OverlapCheck::run() const {
  for (int i = 0; i < count_; ++i) {
    for (int j = 0; j < count_; ++j) {
      const Range &a = ranges_[i], &b = ranges_[j];
      if (i == j || !a.output || (b.output && j < i)) continue;
      if (ranges_overlap(a.view->data, a.bytes, b.view->data, b.bytes))
        fail(fn_, a.name, " (", a.view->describe(), ") must not overlap ", b.output ? "the output " : "the input ",
             b.name, " (", b.view->describe(), "), but their memory ranges overlap");
    }
  }
}

// ---- strided rows: the training-graph ops ----

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

RowsOperand as_rows(const char* fn, const char* name, const TensorView& view, Stage stage) {
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
  if (stage == Stage::call && view.data == nullptr)
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

RowsOperand as_flat(const char* fn, const char* name, const TensorView& view, Stage stage) {
  const std::int64_t numel = view.numel();
  if (!view.is_contiguous())
    fail(fn, name, " must be contiguous, but got strides ", strides_string(view), " for shape ", view.shape_string());
  if (stage == Stage::call && numel > 0 && view.data == nullptr)
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
                    const RowsOperand& in, Stage stage) {
  if (stage == Stage::call && ranges_overlap(out.data, out.bytes(), in.data, in.bytes()))
    fail(fn, out_name, " (", rows_string(out), ") must not overlap ", in_name, " (", rows_string(in),
         "), but their memory ranges overlap");
}

void check_disjoint_or_same(const char* fn, const char* out_name, const RowsOperand& out, const char* in_name,
                            const RowsOperand& in, Stage stage) {
  if (stage == Stage::descriptor) return;
  const bool same = out.data == in.data && out.dtype == in.dtype && out.rows == in.rows && out.n == in.n &&
                    (out.rows <= 1 || out.row_stride == in.row_stride);
  if (same || !ranges_overlap(out.data, out.bytes(), in.data, in.bytes())) return;
  fail(fn, out_name, " (", rows_string(out), ") must be exactly ", in_name,
       " (in place) or not overlap it, but their memory ranges partly overlap");
}

void check_finite(const char* fn, const char* name, float value) {
  if (!std::isfinite(value)) fail(fn, name, " must be finite, but got ", value);
}

// ---- strided rows on the cpu or one GPU ----

OnDevice call_device(const char* fn, const char* name, const TensorView& view) {
  if (!view.present) fail(fn, name, " must be present, but got an absent view");
  check_device(fn, name, view, view.device, view.device_index, name);
  if (view.rank < 0 || view.rank > kMaxRank)
    fail(fn, name, " rank must be in [0, ", kMaxRank, "], but got ", view.rank);
  return {view.device, view.device_index, name};
}

void check_operand_on(const char* fn, const char* name, const TensorView& view, const OnDevice& dev) {
  if (!view.present) fail(fn, name, " must be present, but got an absent view");
  check_device(fn, name, view, dev.device, dev.index, dev.owner);
  if (view.rank < 0 || view.rank > kMaxRank)
    fail(fn, name, " rank must be in [0, ", kMaxRank, "], but got ", view.rank);
}

void check_float_operand_on(const char* fn, const char* name, const TensorView& view, const OnDevice& dev) {
  check_operand_on(fn, name, view, dev);
  if (!is_float_dtype(view.dtype)) fail(fn, name, " dtype must be f32, bf16 or f16, but got ", dtype_name(view.dtype));
}

void check_dtype_on(const char* fn, const char* name, const TensorView& view, DType want, const OnDevice& dev) {
  check_operand_on(fn, name, view, dev);
  if (view.dtype != want) fail(fn, name, " dtype must be ", dtype_name(want), ", but got ", dtype_name(view.dtype));
}

RowsOperand as_rows_on(const char* fn, const char* name, const TensorView& view, const OnDevice& dev, Stage stage) {
  const RowsOperand r = as_rows(fn, name, view, stage);
  if (stage == Stage::call) check_device_pointer(fn, name, r.data, r.bytes(), dev.device, dev.index);
  return r;
}

void check_device_memory(const char* fn, const char* name, const void* data, std::int64_t bytes, const OnDevice& dev,
                         Stage stage) {
  if (stage == Stage::call) check_device_pointer(fn, name, data, bytes, dev.device, dev.index);
}

RowsOperand as_flat_on(const char* fn, const char* name, const TensorView& view, const OnDevice& dev, Stage stage) {
  const RowsOperand r = as_flat(fn, name, view, stage);
  if (stage == Stage::call) check_device_pointer(fn, name, r.data, r.bytes(), dev.device, dev.index);
  return r;
}

}  // namespace ampkit::ops
