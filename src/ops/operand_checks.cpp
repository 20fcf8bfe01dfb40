// Checks of TensorView operands shared by the op and layer front ends (ops layer): structure,
// shapes, dtypes and overlap, each failing with a message in the caller's words.
#include "ops/operand_checks.hpp"

#include <cstdint>
#include <string>

#include "ampkit/core/error.hpp"
#include "core/checked_math.hpp"
#include "ops/device_memory.hpp"

namespace ampkit::ops {
namespace {

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

std::int64_t check_float_view_on(const char* fn, const char* name, const TensorView& v, Device device, int device_index,
                                 const char* owner) {
  if (v.device == Device::cuda) {
    if (const char* why = cuda_unavailable())
      fail_with(ErrorKind::unsupported, fn, name, " is in cuda:", v.device_index, " memory, but ", why);
    if (v.device_index < 0 || v.device_index >= cuda_usable_devices())
      fail(fn, name, " is on cuda:", v.device_index, ", but this machine has ", cuda_usable_devices(),
           " CUDA device(s)");
  } else if (v.device != Device::cpu) {
    fail(fn, name, " device must be cpu or cuda, but got the value ", static_cast<int>(v.device));
  }
  if (v.device != device || (device == Device::cuda && v.device_index != device_index))
    fail(fn, name, " is in ", device_name(v.device), v.device == Device::cuda ? ":" : "",
         v.device == Device::cuda ? std::to_string(v.device_index) : std::string(), " memory, but ", owner, " is in ",
         device_name(device), device == Device::cuda ? ":" : "",
         device == Device::cuda ? std::to_string(device_index) : std::string(),
         " memory: every operand of one call must be on one device");
  TensorView host = v;  // the structure checks are the same on every device
  host.device = Device::cpu;
  const std::int64_t bytes = check_float_view(fn, name, host);
  if (v.device == Device::cuda && v.data != nullptr && bytes > 0)
    if (const char* why = cuda_pointer_problem(v.data, v.device_index))
      fail(fn, name, " must point to device memory of cuda:", v.device_index, " (its view says so), but it points to ",
           why);
  return bytes;
}

void check_given(const char* fn, const char* name, const TensorView& v, const char* what) {
  if (!v.present) fail(fn, name, " must be given (", what, "), but it is absent");
}

void check_data(const char* fn, const char* name, const TensorView& v, const char* what) {
  if (v.data != nullptr) return;
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
  if (!v.present || v.data == nullptr || bytes <= 0) return;
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

}  // namespace ampkit::ops
