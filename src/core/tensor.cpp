// TensorView construction, sizes and descriptions; the byte-range overlap test (core layer).
#include "ampkit/core/tensor.hpp"

#include <cstdint>
#include <string>

#include "ampkit/core/error.hpp"
#include "core/checked_math.hpp"

namespace ampkit {

TensorView::TensorView(const void* d, DType t, const std::int64_t* dims, int r, Device dev)
    : data(const_cast<void*>(d)), dtype(t), rank(r), device(dev), present(true) {
  constexpr const char* fn = "TensorView";
  if (r < 0 || r > kMaxRank) fail(fn, "rank must be in [0, ", kMaxRank, "], but got ", r);
  std::int64_t stride = 1;
  for (int i = r - 1; i >= 0; --i) {
    if (dims[i] < 0) fail(fn, "dimension ", i, " must be >= 0, but got ", dims[i]);
    shape[i] = dims[i];
    strides[i] = stride;
    const auto next = checked_mul(stride, dims[i] > 0 ? dims[i] : 1);
    if (!next) fail(fn, "the number of elements of ", shape_string(), " overflows int64");
    stride = *next;
  }
}

TensorView::TensorView(const void* d, DType t, std::initializer_list<std::int64_t> dims, Device dev)
    : TensorView(d, t, dims.begin(), static_cast<int>(dims.size()), dev) {}

TensorView TensorView::column_major(const void* d, DType t, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                    Device dev) {
  TensorView v(d, t, {rows, cols}, dev);
  v.strides = {1, ld};
  return v;
}

std::int64_t TensorView::numel() const {
  std::int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    const auto next = checked_mul(n, shape[i]);
    if (!next) fail("TensorView::numel", "the element count of ", shape_string(), " overflows int64");
    n = *next;
  }
  return n;
}

std::int64_t TensorView::bytes() const {
  // The span from the first to one past the last element, for non-negative strides.
  std::int64_t last = 0;
  for (int i = 0; i < rank; ++i) {
    if (shape[i] == 0) return 0;
    const auto step = checked_mul(shape[i] - 1, strides[i]);
    const auto sum = step ? checked_add(last, *step) : std::nullopt;
    if (!sum) fail("TensorView::bytes", "the byte size of ", shape_string(), " overflows int64");
    last = *sum;
  }
  const auto total = checked_mul(last + 1, static_cast<std::int64_t>(dtype_size(dtype)));
  if (!total) fail("TensorView::bytes", "the byte size of ", shape_string(), " overflows int64");
  return *total;
}

bool TensorView::is_contiguous() const {
  // The strides the constructor gives: a zero dim counts as 1 (so [4, 0] is contiguous with
  // strides [1, 1]); size-1 dims may have any stride. The running product cannot overflow here
  // once it passed the constructor's check; checked anyway for hand-built views.
  std::int64_t expected = 1;
  for (int i = rank - 1; i >= 0; --i) {
    if (shape[i] != 1 && shape[i] != 0 && strides[i] != expected) return false;
    const auto next = checked_mul(expected, shape[i] > 0 ? shape[i] : 1);
    if (!next) return false;
    expected = *next;
  }
  return true;
}

std::string TensorView::shape_string() const {
  std::string s = "[";
  for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string TensorView::describe() const {
  if (!present) return "absent";
  std::string s = shape_string() + " " + std::string(dtype_name(dtype));
  if (device != Device::cpu) s += std::string(" on ") + device_name(device) + ":" + std::to_string(device_index);
  return s;
}

bool ranges_overlap(const void* a, std::int64_t a_bytes, const void* b, std::int64_t b_bytes) {
  if (a == nullptr || b == nullptr || a_bytes <= 0 || b_bytes <= 0) return false;
  const auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + static_cast<std::uintptr_t>(b_bytes) && pb < pa + static_cast<std::uintptr_t>(a_bytes);
}

}  // namespace ampkit
