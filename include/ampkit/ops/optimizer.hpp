// Optimizer steps on fp32 master parameters, global gradient norm and the finiteness check of
// fp16 loss scaling (ops layer, public). Called by the graph trainer once per parameter per step;
// each step is one fused pass over the parameter. Results are bitwise independent of the thread
// count (the norm sums fixed blocks in a fixed order).
#pragma once

#include <cstdint>
#include <memory>
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

// ---- The multi-tensor step (one call for all parameters, on the cpu or one GPU) ----------------
//
// The whole optimizer step of a trainer over a fixed list of parameters, in the memory of one
// device: gradient accumulation over micro-batches, the global gradient norm, the finiteness
// check, the clip coefficient, dynamic loss scaling and the skip decision, then AdamW or SGD.
// The decision lives in a StepScalars record in the device's memory and the updates read it
// there, so on a GPU the host enqueues the whole step without waiting for anything. On the cpu
// each stage calls the per-parameter ops above (adamw_step, sgd_step, global_grad_norm,
// all_finite, convert, add_accumulate), so a trainer has one code path and the cpu bits are
// those of the per-parameter calls; the CUDA kernels (src/cuda/optimizer/) give the same bits:
// the same fp32 operations per element, unfused, and the norm's sum of squares in the
// documented order of global_grad_norm (blocks of 4096, 8 fp64 lanes, blocks in order, view
// after view), whatever the launch configuration.

/// The fixed rules of the step decision.
struct StepRule {
  double clip_norm = 0.0;     // > 0: clip the global norm to this value (coefficient
                              // clip / (norm + 1e-6) when norm > clip)
  double divisor = 1.0;       // the gradients are the sum of `divisor` means (micro-batches x
                              // ranks): unscale = 1 / (seed * divisor)
  bool loss_scaling = false;  // fp16 dynamic loss scaling (trainer.hpp's LossScaleConfig)
  float growth = 2.0f, backoff = 0.5f, min_scale = 1.0f;
  std::int64_t growth_interval = 2000;
};

/// The dynamic loss scale's rule as MultiTensorStep::decide runs it (on the host; the device runs
/// the same definition): non-finite: scale = max(min_scale, scale * backoff), good_steps = 0,
/// skipped_steps += 1; finite: good_steps += 1, and at growth_interval scale *= growth when that
/// stays finite and <= FLT_MAX / 2, good_steps = 0. train::LossScaler calls it.
void apply_loss_scale_rule(float& scale, std::int64_t& good_steps, std::int64_t& skipped_steps, const StepRule& rule,
                           bool finite);

/// The step's scalars, in the memory of the step's device (host memory on the cpu). Written by
/// MultiTensorStep::accumulate (loss_sum) and decide; read by adamw / sgd. Plain data: a
/// checkpoint's loss-scale state and the step count are read from and written to it.
struct StepScalars {
  double loss_sum = 0.0;                           // the micro-batches' losses added in order (double)
  double grad_norm = 0.0;                          // the unscaled global norm (before clipping; NaN/Inf if so)
  float seed = 1.0f;                               // the loss seed of the next backward: loss_scale, or 1 unscaled
  float used_seed = 1.0f;                          // the seed the decided step's gradients were computed with
  float grad_scale = 1.0f;                         // unscale * clip coefficient, the factor the update applies
  float loss_scale = 1.0f;                         // the dynamic loss scale (LossScaleState::scale)
  std::int32_t skip = 0;                           // 1: non-finite gradients, the update does nothing
  std::int32_t window_miss = 0;                    // 1: the step count left the window adamw was given (a bug)
  std::int64_t good_steps = 0, skipped_steps = 0;  // LossScaleState
  std::int64_t steps = 0;                          // updates taken (skipped steps not counted)
};

/// One parameter of the step: param f32; grad (what decide and the update read) f32/bf16/f16;
/// m, v f32 (AdamW both; SGD: m is the momentum buffer, absent without momentum; v absent);
/// param_copy absent or bf16/f16/f32; with accumulation, source (f32/bf16/f16, the micro-batch's
/// gradient) and acc (f32, where accumulate adds it; usually grad itself). All the same shape,
/// contiguous, in the memory of one device.
struct MultiTensorParam {
  TensorView param, grad, m, v, param_copy, source, acc;
  bool decay = true;  // the weight decay applies (else 0)
};

/// The per-step hyper-parameters of the updates. AdamW's bias correction uses the step count in
/// StepScalars (after decide counted the step): the caller names the counts it can be, the
/// window [step_base, step_base + kStepWindow), e.g. the last count it read plus 1 — a count
/// outside it sets window_miss and updates nothing.
inline constexpr int kStepWindow = 4;
struct MultiAdamWArgs {
  float lr = 0.0f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.0f;
  std::int64_t step_base = 1;
};
struct MultiSgdArgs {
  float lr = 0.0f, momentum = 0.0f, weight_decay = 0.0f;
};

class MultiTensorStep {
 public:
  /// Checks every parameter (the rules of adamw_step / sgd_step per parameter; every view on
  /// `device`), builds the device's table of the parameters once and allocates the StepScalars
  /// (seed = 1, loss_scale = `initial_scale`, steps 0). Throws ampkit::Error naming the list
  /// position ("params[3] ...").
  MultiTensorStep(std::span<const MultiTensorParam> params, const StepRule& rule, Device device, int device_index = 0,
                  float initial_scale = 1.0f);
  MultiTensorStep(MultiTensorStep&&) noexcept;
  MultiTensorStep& operator=(MultiTensorStep&&) noexcept;
  ~MultiTensorStep();

  /// acc = source (first) or acc += source (fp32) for every parameter with a source, and
  /// loss_sum = loss (first) or loss_sum + loss, loss: one f32 in the device's memory (null: no
  /// loss). One launch on a GPU.
  void accumulate(bool first, const float* loss);
  /// The decision (mirrors train/loss_scaler.cpp): norm = sqrt(sum of squares of every grad) *
  /// unscale, unscale = 1 / (seed * divisor); finite = every grad element finite; with loss
  /// scaling the scaler records `finite`; non-finite: skip = 1; else grad_scale = float(unscale *
  /// coef), steps += 1. Then used_seed = seed, seed = loss_scaling ? loss_scale : 1.
  void decide();
  /// The same decision from a norm the caller computed (raw_norm: sqrt of the sum of squares,
  /// before the unscale) and its finiteness: ZeRO-1, whose ranks each hold one shard of the sums
  /// (src/train/data_parallel.hpp). cpu only (the scalars in host memory); the grads are not read.
  void decide(double raw_norm, bool finite);
  /// The updates of every parameter with the decided grad_scale, nothing when skip is set.
  /// Throws ampkit::Error on bad hyper-parameters (the rules of adamw_step / sgd_step).
  void adamw(const MultiAdamWArgs& args);
  void sgd(const MultiSgdArgs& args);

  /// The StepScalars in the device's memory (a loss seed can be bound to &scalars()->seed).
  StepScalars* scalars() const;
  /// Copies the scalars to the host (waits for the device's stream), and back.
  StepScalars read() const;
  void write(const StepScalars& s);
  /// The kernel entry the calls use ("multi_tensor_step_cuda", "multi_tensor_step_cpu").
  const char* kernel_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ampkit
