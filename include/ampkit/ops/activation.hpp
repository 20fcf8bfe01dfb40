// GELU as a standalone op, forward and backward (ops layer, public). Called by the graph executor
// where GELU is not fused into a GEMM epilogue. The op evaluates the scalar fp32 functions of
// src/cpu/math/gelu_math.hpp; the fused epilogue's tanh GELU uses the exp2 form
// (gelu_exp2_form.hpp): fused and unfused graphs agree within the same bound
// (docs/NUMERICS.md, "GELU"), not bit for bit (on avx2 ~half the tanh and ~1/6 of the erf outputs
// differ in their last bits).
#pragma once

#include <string>

#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/gemm.hpp"

namespace ampkit {

/// y = gelu(x) (tanh or erf form), fp32 math, rounded once to y's dtype.
///   x, y: the same shape (any rank), dtypes each in {f32, bf16, f16}, last dim contiguous.
///   y may alias x exactly (in place); partial overlap is rejected.
/// Throws ampkit::Error (nothing written) on a bad shape, dtype, device or overlap.
void gelu_forward(const TensorView& x, const TensorView& y, GeluVariant variant);

/// dx = dy * gelu'(x), fp32 math, rounded once.
///   x, dy, dx: the same shape, dtypes each in {f32, bf16, f16}; dx may alias dy exactly.
/// Throws ampkit::Error (nothing written) on a bad shape, dtype, device or overlap.
void gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx, GeluVariant variant);

/// Empty when the call would run; otherwise the message it would throw. Never throw.
std::string gelu_forward_check(const TensorView& x, const TensorView& y, GeluVariant variant) noexcept;
std::string gelu_backward_check(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                GeluVariant variant) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string gelu_forward_descriptor_check(const TensorView& x, const TensorView& y, GeluVariant variant) noexcept;
std::string gelu_backward_descriptor_check(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                           GeluVariant variant) noexcept;

/// The kernel the call would use now (given AMPKIT_ISA and the machine), e.g. "gelu_cpu".
/// Throw like the call.
const char* gelu_forward_kernel_name(const TensorView& x, const TensorView& y, GeluVariant variant);
const char* gelu_backward_kernel_name(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                      GeluVariant variant);

}  // namespace ampkit
