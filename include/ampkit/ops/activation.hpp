// GELU as a standalone op, forward and backward (ops layer, public). Called by the graph executor
// where GELU is not fused into a GEMM epilogue; the math is the GEMM epilogue's
// (src/cpu/math/gelu_math.hpp), so fused and unfused graphs compute the same values.
#pragma once

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

}  // namespace ampkit
