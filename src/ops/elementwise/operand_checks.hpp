// Argument checks shared by the front ends of the training-graph ops (ops layer, internal):
// presence, device, dtype, shape, the [rows, n] reading of a view and memory overlap. Every check
// throws ampkit::Error naming the function, the argument, what was expected and what was given.
// Used by src/ops/{elementwise,activation,embedding,softmax_cross_entropy,optimizer}/.
#pragma once

#include <cstdint>

#include "ampkit/core/tensor.hpp"

namespace ampkit::ops {

/// A view read as a [rows, n] matrix: last dim contiguous, rows `row_stride` elements apart
/// (leading dims collapsed; rank 0 is [1, 1], rank 1 is [1, n]).
struct RowsOperand {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0;
  std::int64_t n = 0;
  std::int64_t row_stride = 0;
  std::int64_t bytes() const;  // from data to the end of the last element; 0 when empty
  bool empty() const { return rows == 0 || n == 0; }
};

/// `view` must be present and in CPU memory.
void check_cpu_operand(const char* fn, const char* name, const TensorView& view);
/// `view` (present, CPU) must have a float dtype (f32, bf16 or f16).
void check_float_operand(const char* fn, const char* name, const TensorView& view);
/// `view` (present, CPU) must have dtype `want`.
void check_dtype(const char* fn, const char* name, const TensorView& view, DType want);
/// `view` must have rank `rank`.
void check_rank(const char* fn, const char* name, const TensorView& view, int rank);
/// `b` must have the shape of `a`.
void check_same_shape(const char* fn, const char* a_name, const TensorView& a, const char* b_name, const TensorView& b);
/// `view` as [rows, n] (see RowsOperand): non-negative strides, last dim contiguous, leading
/// dims collapsible to one row stride >= n, data non-null when there are elements.
RowsOperand as_rows(const char* fn, const char* name, const TensorView& view);
/// A contiguous view as [1, numel] (the optimizer's flat parameters).
RowsOperand as_flat(const char* fn, const char* name, const TensorView& view);
/// Output `out` must not share memory with `in` (any overlap is rejected).
void check_disjoint(const char* fn, const char* out_name, const RowsOperand& out, const char* in_name,
                    const RowsOperand& in);
/// Output `out` must either be exactly `in` (same memory, dtype and layout: in place) or not
/// share memory with it.
void check_disjoint_or_same(const char* fn, const char* out_name, const RowsOperand& out, const char* in_name,
                            const RowsOperand& in);
/// A finite float argument.
void check_finite(const char* fn, const char* name, float value);

}  // namespace ampkit::ops
