// Optimizer steps on fp32 master parameters, global gradient norm and the finiteness check of
// fp16 loss scaling (ops layer, public). Called by the graph trainer once per parameter per step;
// each step is one fused pass over the parameter. Results are bitwise independent of the thread
// count (the norm sums fixed blocks in a fixed order).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ampkit/core/tensor.hpp"

namespace ampkit {

/// AdamW with decoupled weight decay and bias correction, per element i:
///   g = grad * grad_scale;  m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
///   param -= lr * (m / (1 - beta1^step)) / (sqrt(v / (1 - beta2^step)) + eps)
///            + lr * weight_decay * param   (the decay uses the parameter before the step)
///   param_copy = param rounded once to its dtype (when present)
/// param, m, v: f32, the same shape (contiguous); grad: that shape, f32/bf16/f16;
/// param_copy: absent or that shape in bf16/f16/f32. No operand may overlap another.
/// lr, eps >= 0, weight_decay >= 0 (all finite), grad_scale finite; beta1, beta2 in [0, 1);
/// step >= 1. fp32 math per element, with the scalars computed in double and rounded once:
/// step_size = lr / (1 - beta1^step), rsqrt_bc2 = 1 / sqrt(1 - beta2^step), lr_wd = lr *
/// weight_decay, c1 = 1 - beta1, c2 = 1 - beta2; m = beta1 m + c1 g, v = beta2 v + c2 (g g),
/// param = param - (step_size (m / (sqrt(v) rsqrt_bc2 + eps)) + lr_wd param). param_copy is the
/// stored f32 param rounded once. A parameter without elements writes nothing.
/// Throws ampkit::Error (nothing written) on bad input (kind unsupported for device memory).
struct AdamWArgs {
  TensorView param /*f32*/, grad, m /*f32*/, v /*f32*/;
  TensorView param_copy;  // optional bf16/f16 compute copy written from the new param
  float lr = 0.0f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
  float grad_scale = 1.0f;  // grads are multiplied by this first (unscale, clip)
  std::int64_t step = 0;    // 1-based, for bias correction
};
void adamw_step(const AdamWArgs& args);

/// SGD with momentum (PyTorch's form, dampening 0) and L2 weight decay, per element i:
///   g = grad * grad_scale + weight_decay * param
///   buf = momentum * buf + g (the caller zeroes the buffer before the first step)
///   param -= lr * (momentum != 0 ? buf : g);  param_copy = param rounded once (when present)
/// param: f32; grad: f32/bf16/f16; momentum_buffer: f32, may be absent only when momentum == 0
/// (given with momentum == 0, it is set to g without being read); param_copy: absent or
/// bf16/f16/f32, the stored f32 param rounded once. Same shape, contiguous, no overlaps.
/// lr >= 0, momentum in [0, 1), weight_decay >= 0 (all finite), grad_scale finite. fp32 math
/// per element, in the order written above.
/// Throws ampkit::Error (nothing written) on bad input (kind unsupported for device memory).
struct SgdArgs {
  TensorView param, grad, momentum_buffer /*f32, may be absent when momentum==0*/, param_copy;
  float lr = 0.0f, momentum = 0.0f, weight_decay = 0.0f, grad_scale = 1.0f;
};
void sgd_step(const SgdArgs& args);

/// Empty when the step would run; otherwise the message it would throw. Never throw.
std::string adamw_check(const AdamWArgs& args) noexcept;
std::string sgd_check(const SgdArgs& args) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string adamw_descriptor_check(const AdamWArgs& args) noexcept;
std::string sgd_descriptor_check(const SgdArgs& args) noexcept;

/// The kernel the step would use now, e.g. "adamw_fused_cpu". Throw like the step.
const char* adamw_kernel_name(const AdamWArgs& args);
const char* sgd_kernel_name(const SgdArgs& args);

/// Sum of squares of all elements of all grads, in fp64 in a fixed order -> sqrt; NaN/Inf
/// propagate. The order: blocks of 4096 elements of each view, each block summed over 8
/// interleaved fp64 lanes added in lane order, the block sums added in block order, view after
/// view. An empty list gives 0. Each view: any shape, f32/bf16/f16, contiguous.
/// Under the reference kernels (set_reference_kernels, e.g. `ampkit check kernels`) the reference
/// entry adds the squares one element after the other in fp64 instead: within
/// (n + 8) 2^-52 |norm| of this order (error_bounds), not bit for bit.
/// Throws ampkit::Error on bad input (the message names the list position: "grads[2] ...").
double global_grad_norm(std::span<const TensorView> grads);

/// True when every element of every view is finite (fp16 loss scaling: skip the step otherwise);
/// true for an empty list. Each view: any shape, f32/bf16/f16, contiguous.
/// Throws ampkit::Error on bad input (the message names the list position: "views[2] ...").
bool all_finite(std::span<const TensorView> views);

}  // namespace ampkit
