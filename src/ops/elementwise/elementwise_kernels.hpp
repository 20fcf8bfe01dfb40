// The elementwise and row-sum kernel lists (kernels layer, internal): the validated problems the
// front end (src/ops/elementwise/) hands to a kernel, the kernels, and one list per problem, best
// first, reference last. Read by the front end and tests/cpu/elementwise/.
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

namespace ampkit::cpu {

/// Rows per block of sum_rows: fp32 partial sums of kSumRowsBlock consecutive rows, added to the
/// column totals in block order. Fixed, so the result never depends on the thread count.
inline constexpr std::int64_t kSumRowsBlock = 32;

/// fp32 math, OpenMP over tiles of rows.
void elementwise_cpu(const ops::ElementwiseProblem& p);
/// Double math, one rounding per output.
void elementwise_reference(const ops::ElementwiseProblem& p);
/// fp32 blocks of kSumRowsBlock rows, OpenMP over column chunks.
void sum_rows_cpu(const ops::SumRowsProblem& p);
/// Double sums over all rows (plus the old value when accumulating), one rounding.
void sum_rows_reference(const ops::SumRowsProblem& p);

/// Best first, reference last.
std::span<const ops::ElementwiseEntry> elementwise_kernels();
std::span<const ops::SumRowsEntry> sum_rows_kernels();

}  // namespace ampkit::cpu
