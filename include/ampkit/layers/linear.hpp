// The Linear (fully connected) layer, forward and backward (kernels layer), PyTorch's row-major
// convention: x [batch, in], w [out, in], b [out], y = x wᵀ + b (optionally GELU). Each pass is
// one gemm() call with a fused epilogue (DESIGN.md section 3, "The Linear layer"): bias and GELU
// in the forward GEMM, db in the dW GEMM (BGRADB), the layer below's GELU gradient and bias
// gradient in the dX GEMM (DGELU_BGRAD). Called by the graph executor, the benches and users.
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"
#include "ampkit/ops/gemm.hpp"

namespace ampkit {

/// A row-major contiguous operand of a Linear call (data null = absent).
struct LinearOperand {
  const void* data = nullptr;
  DType dtype = DType::f32;
};
/// A row-major contiguous output of a Linear call (data null = not wanted).
struct LinearOutput {
  void* data = nullptr;
  DType dtype = DType::f32;
};

/// Forward: y = act(x wᵀ + b). act is the identity or GELU (variant `gelu_variant`).
/// x, w, y: each any of f32/bf16/f16 (chosen independently, as for gemm); fp32 accumulation,
/// y rounded once. bias: y's dtype or f32. aux: the pre-activation x wᵀ + b (fp32 value rounded
/// to aux's dtype, y's dtype or f32), needed by the backward of a GELU layer; only with gelu.
struct LinearForwardArgs {
  std::int64_t batch = 0;         // rows of x and y, >= 0
  std::int64_t in_features = 0;   // >= 0
  std::int64_t out_features = 0;  // >= 0
  LinearOperand x;                // [batch, in]
  LinearOperand w;                // [out, in]
  LinearOperand bias;             // [out] or absent
  LinearOutput y;                 // [batch, out]
  bool gelu = false;              // apply GELU after the bias
  GeluVariant gelu_variant = GeluVariant::tanh;
  LinearOutput aux;               // [batch, out] pre-activation (gelu only) or absent
  Fp16Mode fp16_mode = Fp16Mode::exact;  // handed to gemm (the numerics policy decides it)
};

/// Backward of y = x wᵀ + b: dx = dy w, dw = dyᵀ x, db = sum over the batch of dy.
/// Each output is optional. dy, x, w, dx, dw: each any of f32/bf16/f16. db: dw's dtype or f32
/// (any dtype when dw is absent). With `accumulate`, dw += dyᵀ x and db += sum (gradient
/// accumulation over micro-batches); dx is always overwritten.
///
/// Fusion with the layer below (an MLP: below = act(...) feeds this layer's x): with
/// `below_gelu`, dx receives the gradient of the layer below's pre-activation,
/// dx = (dy w) * gelu'(below_aux), and below_db (optional) the bias gradient of the layer below,
/// the sum over the batch of that fp32 value (epilogue DGELU_BGRAD), += with `accumulate`.
/// below_aux is the aux saved by the layer below's forward (dx's dtype or f32); below_db is
/// dx's dtype or f32.
struct LinearBackwardArgs {
  std::int64_t batch = 0;
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  LinearOperand dy;               // [batch, out]
  LinearOperand x;                // [batch, in], needed for dw
  LinearOperand w;                // [out, in], needed for dx
  LinearOutput dx;                // [batch, in] or absent
  LinearOutput dw;                // [out, in] or absent
  LinearOutput db;                // [out] or absent
  bool accumulate = false;        // dw, db, below_db += instead of =
  bool below_gelu = false;        // dx is multiplied by gelu'(below_aux) (needs dx)
  GeluVariant below_gelu_variant = GeluVariant::tanh;
  LinearOperand below_aux;        // [batch, in] the layer below's pre-activation
  LinearOutput below_db;          // [in] or absent (needs below_gelu)
  Fp16Mode fp16_mode = Fp16Mode::alt;  // handed to gemm; alt = the default backward policy
};

/// Runs the forward GEMM (epilogue BIAS, GELU_BIAS, GELU_AUX_BIAS, GELU, GELU_AUX or DEFAULT).
/// Throws ampkit::Error naming the argument (y and aux untouched) on bad sizes, null or
/// overlapping buffers, a bias/aux dtype other than y's or f32, or aux without gelu.
void linear_forward(const LinearForwardArgs& args);

/// Runs the dx GEMM (DEFAULT, DGELU or DGELU_BGRAD) and the dw GEMM (DEFAULT or BGRADB).
/// Throws ampkit::Error (no output written) on bad sizes, null or overlapping buffers, a
/// missing x (for dw) / w (for dx) / below_aux (for below_gelu), below_db without below_gelu,
/// or a db/below_db/below_aux dtype other than allowed.
void linear_backward(const LinearBackwardArgs& args);

/// The gemm kernel linear_forward(args) would use. Throws like linear_forward.
const char* linear_forward_kernel_name(const LinearForwardArgs& args);

}  // namespace ampkit
