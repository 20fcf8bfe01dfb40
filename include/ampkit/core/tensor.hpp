// TensorView — the one operand type of the public API (core layer): a pointer, a dtype, a shape,
// strides (in elements) and the device that holds the memory. Views never own memory. Inputs and
// outputs are both TensorViews (like DLPack's DLTensor): a function never writes through an
// operand its documentation calls an input. A default-constructed view is absent (optional
// operands). Used by norm, Linear, the GEMM overload, the graph and the CUDA backend.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "ampkit/core/dtype.hpp"

namespace ampkit {

inline constexpr int kMaxRank = 8;

/// Where a view's memory lives. CPU memory is ordinary host memory; CUDA memory is device memory
/// of GPU `device_index` (managed memory is not accepted).
enum class Device : std::uint8_t { cpu, cuda };

/// "cpu" or "cuda".
constexpr const char* device_name(Device d) { return d == Device::cuda ? "cuda" : "cpu"; }

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  int rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> strides{};  // in elements
  Device device = Device::cpu;
  int device_index = 0;
  bool present = false;  // false: the operand is absent

  TensorView() = default;
  /// A row-major contiguous view of `shape` (throws Error on a negative dim, rank > kMaxRank or
  /// an element count that overflows int64). `data` may be null only when the view has no
  /// elements.
  TensorView(const void* data, DType dtype, std::initializer_list<std::int64_t> shape, Device device = Device::cpu);
  TensorView(const void* data, DType dtype, const std::int64_t* shape, int rank, Device device = Device::cpu);

  /// A column-major matrix (the BLAS convention): shape {rows, cols}, strides {1, ld}.
  static TensorView column_major(const void* data, DType dtype, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                 Device device = Device::cpu);

  /// Number of elements (1 for rank 0). Throws Error when it overflows int64.
  std::int64_t numel() const;
  /// Bytes spanned by the elements (numel * dtype size for a contiguous view). Throws Error when
  /// it overflows int64.
  std::int64_t bytes() const;
  /// True when the strides are those of a row-major contiguous tensor (size-1 dims ignored).
  bool is_contiguous() const;
  /// "[2, 3, 4]".
  std::string shape_string() const;
  /// "[2, 3, 4] bf16" (plus " on cuda:0" for device memory); "absent" when not present.
  std::string describe() const;
};

/// True when the byte ranges [a, a+a_bytes) and [b, b+b_bytes) overlap (empty ranges never do).
bool ranges_overlap(const void* a, std::int64_t a_bytes, const void* b, std::int64_t b_bytes);

}  // namespace ampkit
