// Optimizer steps on fp32 master parameters, global gradient norm and the finiteness check of
// fp16 loss scaling (ops layer, public). Called by the graph trainer once per parameter per step;
// each step is one fused pass over the parameter. Results are bitwise independent of the thread
// count (the norm sums fixed blocks in a fixed order).
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/tensor.hpp"

namespace ampkit {

/// AdamW with decoupled weight decay and bias correction, per element i:
///   g = grad * grad_scale;  m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
///   param -= lr * (m / (1 - beta1^step)) / (sqrt(v / (1 - beta2^step)) + eps)
///            + lr * weight_decay * param   (the decay uses the parameter before the step)
///   param_copy = param rounded once to its dtype (when present)
/// param, m, v: f32, the same shape (contiguous); grad: that shape, f32/bf16/f16;
/// param_copy: absent or that shape in bf16/f16/f32. No operand may overlap another.
/// lr, eps >= 0, weight_decay >= 0, grad_scale finite; beta1, beta2 in [0, 1); step >= 1.
/// Throws ampkit::Error (nothing written) on bad input.
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
/// param: f32; grad: f32/bf16/f16; momentum_buffer: f32, may be absent only when momentum == 0;
/// param_copy: absent or bf16/f16/f32. Same shape, contiguous, no overlaps.
/// lr >= 0, momentum in [0, 1), weight_decay >= 0, grad_scale finite.
/// Throws ampkit::Error (nothing written) on bad input.
struct SgdArgs {
  TensorView param, grad, momentum_buffer /*f32, may be absent when momentum==0*/, param_copy;
  float lr = 0.0f, momentum = 0.0f, weight_decay = 0.0f, grad_scale = 1.0f;
};
void sgd_step(const SgdArgs& args);

/// Sum of squares of all elements of all grads, in fp64 in a fixed order -> sqrt; NaN/Inf
/// propagate. Each view: any shape, f32/bf16/f16, contiguous. Throws ampkit::Error on bad input.
double global_grad_norm(std::span<const TensorView> grads);

/// True when every element of every view is finite (fp16 loss scaling: skip the step otherwise).
/// Each view: f32/bf16/f16, contiguous. Throws ampkit::Error on bad input.
bool all_finite(std::span<const TensorView> views);

}  // namespace ampkit
