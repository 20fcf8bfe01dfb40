// Tensor views (core layer): a pointer, a dtype, a shape and strides (in elements).
// Views never own memory. A default-constructed view is "absent" (used for optional arguments).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "ampkit/dtype.hpp"

namespace ampkit {

inline constexpr int kMaxRank = 8;

/// Shape and strides of a strided tensor of up to kMaxRank dimensions.
struct Layout {
  int rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> strides{};  // in elements

  /// Contiguous row-major layout of `shape`; throws Error on a negative dim or rank > kMaxRank.
  static Layout contiguous(std::initializer_list<std::int64_t> shape);
  static Layout contiguous(const std::int64_t* shape, int rank);

  /// Number of elements (product of the shape; 1 for rank 0). Throws Error on overflow.
  std::int64_t numel() const;
  /// True when the strides are those of a row-major contiguous tensor (size-1 dims ignored).
  bool is_contiguous() const;
  /// "[2, 3, 4]".
  std::string shape_string() const;
};

/// A mutable view of a tensor.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  Layout layout;
  bool present = false;

  TensorView() = default;
  TensorView(void* d, DType t, Layout l) : data(d), dtype(t), layout(l), present(true) {}
  TensorView(void* d, DType t, std::initializer_list<std::int64_t> shape)
      : TensorView(d, t, Layout::contiguous(shape)) {}

  std::int64_t numel() const { return layout.numel(); }
  std::int64_t bytes() const { return numel() * static_cast<std::int64_t>(dtype_size(dtype)); }
};

/// A read-only view of a tensor; any TensorView converts to it.
struct ConstTensorView {
  const void* data = nullptr;
  DType dtype = DType::f32;
  Layout layout;
  bool present = false;

  ConstTensorView() = default;
  ConstTensorView(const void* d, DType t, Layout l) : data(d), dtype(t), layout(l), present(true) {}
  ConstTensorView(const void* d, DType t, std::initializer_list<std::int64_t> shape)
      : ConstTensorView(d, t, Layout::contiguous(shape)) {}
  ConstTensorView(const TensorView& v)  // NOLINT: implicit by design, like T* -> const T*
      : data(v.data), dtype(v.dtype), layout(v.layout), present(v.present) {}

  std::int64_t numel() const { return layout.numel(); }
  std::int64_t bytes() const { return numel() * static_cast<std::int64_t>(dtype_size(dtype)); }
};

/// True when the byte ranges [a, a+a_bytes) and [b, b+b_bytes) overlap (empty ranges never do).
bool ranges_overlap(const void* a, std::int64_t a_bytes, const void* b, std::int64_t b_bytes);

}  // namespace ampkit
