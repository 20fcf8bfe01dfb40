// Elementwise arithmetic and the row reduction of the training graph (ops layer, public):
// residual add, gradient accumulation, bias add, bias gradient, scaling. Called by the graph
// executor. Operand dtypes are independent of each other (f32/bf16/f16); math in fp32, every
// output rounded once; results are bitwise independent of the thread count.
// Views: any rank, last dim contiguous, leading dims with any strides that collapse to one row
// stride. An output may alias an input exactly (in place); partial overlap is rejected.
#pragma once

#include <string>

#include "ampkit/core/tensor.hpp"

namespace ampkit {

/// out = a + b. a, b, out: the same shape. Throws ampkit::Error (nothing written) on bad input.
void add(const TensorView& a, const TensorView& b, const TensorView& out);

/// acc += x (gradient accumulation). x, acc: the same shape. Throws ampkit::Error.
void add_accumulate(const TensorView& x, const TensorView& acc);

/// out[r, :] = x[r, :] + bias[:]. x, out: [rows, n] (rank >= 1; leading dims are rows), bias: [n].
/// Throws ampkit::Error (nothing written) on bad input.
void add_row_vector(const TensorView& x, const TensorView& bias, const TensorView& out);

/// out[j] (+)= sum over rows of x[r, j] (the bias gradient). x: [rows, n] (rank >= 1; leading
/// dims are rows), out: [n]. The sum runs in fp32 over fixed blocks of rows in a fixed order, so
/// it does not depend on the thread count; rows = 0 gives 0 (or keeps out when accumulating).
/// Throws ampkit::Error (nothing written) on bad input.
void sum_rows(const TensorView& x, const TensorView& out, bool accumulate);

/// out = alpha * x. x, out: the same shape; alpha finite. Throws ampkit::Error.
void scale(const TensorView& x, float alpha, const TensorView& out);

/// Empty when the call with these arguments would run; otherwise the message it would throw.
/// Never throw.
std::string add_check(const TensorView& a, const TensorView& b, const TensorView& out) noexcept;
std::string add_accumulate_check(const TensorView& x, const TensorView& acc) noexcept;
std::string add_row_vector_check(const TensorView& x, const TensorView& bias, const TensorView& out) noexcept;
std::string sum_rows_check(const TensorView& x, const TensorView& out, bool accumulate) noexcept;
std::string scale_check(const TensorView& x, float alpha, const TensorView& out) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string add_descriptor_check(const TensorView& a, const TensorView& b, const TensorView& out) noexcept;
std::string add_accumulate_descriptor_check(const TensorView& x, const TensorView& acc) noexcept;
std::string add_row_vector_descriptor_check(const TensorView& x, const TensorView& bias,
                                            const TensorView& out) noexcept;
std::string sum_rows_descriptor_check(const TensorView& x, const TensorView& out, bool accumulate) noexcept;
std::string scale_descriptor_check(const TensorView& x, float alpha, const TensorView& out) noexcept;

/// The kernel the call would use now, e.g. "elementwise_cpu" or "sum_rows_blocked32_cpu".
/// Throw like the call.
const char* add_kernel_name(const TensorView& a, const TensorView& b, const TensorView& out);
const char* add_accumulate_kernel_name(const TensorView& x, const TensorView& acc);
const char* add_row_vector_kernel_name(const TensorView& x, const TensorView& bias, const TensorView& out);
const char* sum_rows_kernel_name(const TensorView& x, const TensorView& out, bool accumulate);
const char* scale_kernel_name(const TensorView& x, float alpha, const TensorView& out);

}  // namespace ampkit
