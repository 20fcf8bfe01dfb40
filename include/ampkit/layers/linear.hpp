// The Linear (fully connected) layer, forward and backward (layers layer), PyTorch's row-major
// convention: x [..., in] (leading dims flattened into a batch), w [out, in], b [out],
// y = x wᵀ + b (optionally GELU). Each pass is one gemm() call with a fused epilogue (DESIGN.md
// section 3, "The Linear layer"): bias and GELU in the forward GEMM, db in the dW GEMM (BGRADB),
// the layer below's GELU gradient and bias gradient in the dX GEMM (DGELU_BGRAD).
// Called by the graph executor, the benches and users.
#pragma once

#include <cstdint>
#include <string>

#include "ampkit/core/tensor.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/ops/gemm.hpp"

namespace ampkit {

/// Forward: y = act(x wᵀ + b). act is the identity or GELU (variant `gelu_variant`).
/// x, w, y: each any of f32/bf16/f16 (chosen independently, as for gemm); fp32 accumulation,
/// y rounded once. bias: y's dtype or f32. aux: the pre-activation x wᵀ + b (fp32 value rounded
/// to aux's dtype, y's dtype or f32), needed by the backward of a GELU layer; only with gelu.
/// Every operand is a row-major contiguous TensorView, all in cpu memory or all in device memory
/// of one GPU (the GEMM's CUDA list runs it then); the leading dims of x
/// (e.g. [batch, seq]) are flattened into one batch of rows.
struct LinearForwardArgs {
  TensorView x;       // [..., in], rank >= 1
  TensorView w;       // [out, in]
  TensorView bias;    // [out] or absent
  TensorView y;       // [..., out]: x's leading dims
  bool gelu = false;  // apply GELU after the bias
  GeluVariant gelu_variant = GeluVariant::tanh;
  TensorView aux;                        // y's shape, the pre-activation (gelu only), or absent
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
///
/// Shapes: dy [..., out] sets the batch dims and out; in comes from the first given of x, dx, w,
/// dw, below_aux, below_db, and every given operand must agree with both.
struct LinearBackwardArgs {
  TensorView dy;            // [..., out]
  TensorView x;             // [..., in] (dy's leading dims), needed for dw
  TensorView w;             // [out, in], needed for dx
  TensorView dx;            // x's shape, or absent
  TensorView dw;            // w's shape, or absent
  TensorView db;            // [out] or absent
  bool accumulate = false;  // dw, db, below_db += instead of =
  bool below_gelu = false;  // dx is multiplied by gelu'(below_aux) (needs dx)
  GeluVariant below_gelu_variant = GeluVariant::tanh;
  TensorView below_aux;                           // x's shape: the layer below's pre-activation
  TensorView below_db;                            // [in] or absent (needs below_gelu)
  Fp16Mode fp16_mode = kDefaultBackwardFp16Mode;  // handed to gemm (the policy's backward default)
};

/// What a Linear call did: the report of each GEMM it ran, in order (forward: the one GEMM;
/// backward: dx, then dw, then a bias-gradient-only GEMM when db is wanted without dw). The
/// fp16 counters of the graph executor and of `ampkit train` come from here.
struct LinearReport {
  int gemm_count = 0;
  GemmReport gemms[3];
};

/// Runs the forward GEMM (epilogue BIAS, GELU_BIAS, GELU_AUX_BIAS, GELU, GELU_AUX or DEFAULT).
/// Throws ampkit::Error naming the argument (y and aux untouched) on bad shapes, null or
/// overlapping buffers, a bias/aux dtype other than y's or f32, or aux without gelu
/// (unsupported: device memory).
void linear_forward(const LinearForwardArgs& args, LinearReport* report = nullptr);

/// Runs the dx GEMM (DEFAULT, DGELU or DGELU_BGRAD) and the dw GEMM (DEFAULT or BGRADB).
/// Throws ampkit::Error (no output written) on bad shapes, null or overlapping buffers, a
/// missing x (for dw) / w (for dx) / below_aux (for below_gelu), below_db without below_gelu,
/// or a db/below_db/below_aux dtype other than allowed.
void linear_backward(const LinearBackwardArgs& args, LinearReport* report = nullptr);

/// Empty when the call with `args` would run; otherwise the message it would throw. Never
/// throws.
std::string linear_check(const LinearForwardArgs& args) noexcept;
std::string linear_check(const LinearBackwardArgs& args) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string linear_descriptor_check(const LinearForwardArgs& args) noexcept;
std::string linear_descriptor_check(const LinearBackwardArgs& args) noexcept;

/// The gemm kernel linear_forward(args) would use. Throws like linear_forward.
const char* linear_kernel_name(const LinearForwardArgs& args);

}  // namespace ampkit
