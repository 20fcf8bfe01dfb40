// The elementwise and row-sum problems (ops layer, internal): the validated problems the front end
// (src/ops/elementwise/) hands to a kernel, and the entry types of their kernel lists (the CPU's in
// src/cpu/elementwise/elementwise_kernels.hpp, CUDA's in src/cuda/elementwise/).
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// One [rows, n] operand of an elementwise call; row_stride 0 broadcasts one row to all rows.
struct ElementwiseOperand {
  const void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t row_stride = 0;
};

/// out = a + b (add, add_accumulate, add_row_vector) or out = alpha * a (scale; b.data null).
/// rows, n >= 1; out is disjoint from a and b or exactly one of them (in place).
struct ElementwiseProblem {
  std::int64_t rows = 0;
  std::int64_t n = 0;
  ElementwiseOperand a;
  ElementwiseOperand b;
  float alpha = 1.0f;
  void* out = nullptr;
  DType out_dtype = DType::f32;
  std::int64_t out_row_stride = 0;
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
};

/// out[j] (+)= sum over r of x[r, j]. rows >= 0, n >= 1; out: [n], disjoint from x.
struct SumRowsProblem {
  std::int64_t rows = 0;
  std::int64_t n = 0;
  const void* x = nullptr;
  DType x_dtype = DType::f32;
  std::int64_t x_row_stride = 0;
  void* out = nullptr;
  DType out_dtype = DType::f32;
  bool accumulate = false;
};

using ElementwiseFn = void (*)(const ElementwiseProblem&);
using SumRowsFn = void (*)(const SumRowsProblem&);
using ElementwiseEntry = ops::KernelEntry<ElementwiseProblem, ElementwiseFn>;
using SumRowsEntry = ops::KernelEntry<SumRowsProblem, SumRowsFn>;

}  // namespace ampkit::ops
