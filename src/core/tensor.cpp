// Layout helpers, dtype parsing and overlap checks (core layer).
#include "ampkit/tensor.hpp"

#include <cstdint>
#include <string>

#include "ampkit/error.hpp"

namespace ampkit {

DType parse_dtype(std::string_view text, const char* what) {
  if (text == "f32") return DType::f32;
  if (text == "bf16") return DType::bf16;
  if (text == "f16") return DType::f16;
  fail(what, "expected one of f32, bf16, f16, but got '", std::string(text), "'");
}

Layout Layout::contiguous(const std::int64_t* shape, int rank) {
  if (rank < 0 || rank > kMaxRank)
    fail("Layout::contiguous", "rank must be in [0, ", kMaxRank, "], but got ", rank);
  Layout l;
  l.rank = rank;
  std::int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (shape[d] < 0)
      fail("Layout::contiguous", "dimension ", d, " must be >= 0, but got ", shape[d]);
    l.shape[d] = shape[d];
    l.strides[d] = stride;
    if (__builtin_mul_overflow(stride, shape[d] > 0 ? shape[d] : 1, &stride))
      fail("Layout::contiguous", "the number of elements overflows int64");
  }
  return l;
}

Layout Layout::contiguous(std::initializer_list<std::int64_t> shape) {
  return contiguous(shape.begin(), static_cast<int>(shape.size()));
}

std::int64_t Layout::numel() const {
  std::int64_t n = 1;
  for (int d = 0; d < rank; ++d)
    if (__builtin_mul_overflow(n, shape[d], &n)) fail("Layout::numel", "element count overflows int64");
  return n;
}

bool Layout::is_contiguous() const {
  std::int64_t expected = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

std::string Layout::shape_string() const {
  std::string s = "[";
  for (int d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

bool ranges_overlap(const void* a, std::int64_t a_bytes, const void* b, std::int64_t b_bytes) {
  if (a == nullptr || b == nullptr || a_bytes <= 0 || b_bytes <= 0) return false;
  const auto pa = reinterpret_cast<std::uintptr_t>(a), pb = reinterpret_cast<std::uintptr_t>(b);
  return pa < pb + static_cast<std::uintptr_t>(b_bytes) && pb < pa + static_cast<std::uintptr_t>(a_bytes);
}

}  // namespace ampkit
