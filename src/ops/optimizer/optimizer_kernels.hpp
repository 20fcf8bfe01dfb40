// The optimizer kernel lists (kernels layer, internal): the validated problems the optimizer
// front end (src/ops/optimizer/) hands to a kernel, the kernels, and one list per function (AdamW,
// SGD, global gradient norm, finiteness check), best first, reference last. Read by the front end
// and tests/ops/optimizer/.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// One AdamW step over n >= 1 elements (include/ampkit/ops/optimizer.hpp): param, m, v f32;
/// grad f32/bf16/f16; param_copy null or bf16/f16/f32. No operand overlaps another. The
/// hyper-parameters were validated (lr, eps, weight_decay >= 0; beta1, beta2 in [0, 1);
/// grad_scale finite; step >= 1).
struct AdamWProblem {
  std::int64_t n = 0;
  float* param = nullptr;
  const void* grad = nullptr;
  DType grad_dtype = DType::f32;
  float* m = nullptr;
  float* v = nullptr;
  void* param_copy = nullptr;  // null when absent
  DType param_copy_dtype = DType::bf16;
  float lr = 0.0f, beta1 = 0.0f, beta2 = 0.0f, eps = 0.0f, weight_decay = 0.0f;
  float grad_scale = 1.0f;
  std::int64_t step = 1;
};

/// One SGD step over n >= 1 elements: param f32; grad f32/bf16/f16; momentum_buffer f32 (null
/// only when momentum == 0); param_copy null or bf16/f16/f32. No operand overlaps another.
struct SgdProblem {
  std::int64_t n = 0;
  float* param = nullptr;
  const void* grad = nullptr;
  DType grad_dtype = DType::f32;
  float* momentum_buffer = nullptr;
  void* param_copy = nullptr;
  DType param_copy_dtype = DType::bf16;
  float lr = 0.0f, momentum = 0.0f, weight_decay = 0.0f, grad_scale = 1.0f;
};

/// Validated views (present, cpu, f32/bf16/f16, contiguous, non-null data when not empty) of
/// global_grad_norm and all_finite.
struct ViewsProblem {
  std::span<const TensorView> views;
};

/// One parameter of a multi-tensor step (ampkit/ops/optimizer.hpp MultiTensorParam), validated:
/// pointers into the device's memory (null when absent), n >= 0 elements.
struct MultiTensorRow {
  float* param = nullptr;
  const void* grad = nullptr;
  float* m = nullptr;
  float* v = nullptr;
  void* param_copy = nullptr;
  const void* source = nullptr;  // accumulation source (null: not accumulated)
  float* acc = nullptr;
  std::int64_t n = 0;
  std::int64_t first_chunk = 0;  // the row's first kMultiChunk-element chunk in the step's chunk list
  DType grad_dtype = DType::f32, copy_dtype = DType::bf16, source_dtype = DType::f32;
  bool decay = true;
};

/// Elements per chunk of the multi-tensor kernels: the gradient norm's block (kGradNormBlock).
inline constexpr std::int64_t kMultiChunk = 4096;

enum class MultiTensorOp : std::uint8_t { accumulate, decide, adamw, sgd };

/// AdamW's scalars computed on the host in double and rounded once (adamw_scalars), for the
/// step counts step_base + k, k < kStepWindow.
struct AdamWScalars {
  float b1 = 0, b2 = 0, c1 = 0, c2 = 0, eps = 0, lr_wd = 0;
  float step_size[kStepWindow] = {}, rsqrt_bc2[kStepWindow] = {};
  std::int64_t step_base = 1;
};

/// One call of a multi-tensor step over `rows` (host copy) / `device_rows` (the same rows in
/// the device's memory); chunk_rows[c] is the row of chunk c, partials one double per chunk
/// (device memory; host memory on the cpu, where the device fields equal the host ones).
struct MultiTensorProblem {
  Device device = Device::cpu;
  int device_index = 0;
  MultiTensorOp op = MultiTensorOp::decide;
  std::span<const MultiTensorRow> rows;
  std::span<const TensorView> grads;  // the rows' grads as views (host side; the cpu entries read them)
  const MultiTensorRow* device_rows = nullptr;
  const std::int32_t* chunk_rows = nullptr;
  std::int64_t chunks = 0;
  double* partials = nullptr;
  StepScalars* scalars = nullptr;
  StepRule rule;
  bool first = false;           // accumulate
  const float* loss = nullptr;  // accumulate (may be null)
  // adamw (the per-parameter rules were checked) / sgd
  MultiAdamWArgs adamw;
  AdamWScalars adamw_scalars;
  MultiSgdArgs sgd;
};

/// AdamW's scalars for step `step` in double, rounded once (what adamw_cpu computes).
struct AdamWStepScalars {
  float step_size, rsqrt_bc2;
};
inline AdamWStepScalars adamw_step_scalars(float lr, float beta1, float beta2, std::int64_t step) {
  const double bc1 = 1.0 - std::pow(double{beta1}, static_cast<double>(step));
  const double bc2 = 1.0 - std::pow(double{beta2}, static_cast<double>(step));
  return {static_cast<float>(double{lr} / bc1), static_cast<float>(1.0 / std::sqrt(bc2))};
}

using AdamWFn = void (*)(const AdamWProblem&);
using SgdFn = void (*)(const SgdProblem&);
using GradNormFn = double (*)(const ViewsProblem&);
using AllFiniteFn = bool (*)(const ViewsProblem&);
using AdamWEntry = ops::KernelEntry<AdamWProblem, AdamWFn>;
using SgdEntry = ops::KernelEntry<SgdProblem, SgdFn>;
using GradNormEntry = ops::KernelEntry<ViewsProblem, GradNormFn>;
using AllFiniteEntry = ops::KernelEntry<ViewsProblem, AllFiniteFn>;
using MultiTensorFn = void (*)(const MultiTensorProblem&);
using MultiTensorEntry = ops::KernelEntry<MultiTensorProblem, MultiTensorFn>;

}  // namespace ampkit::ops

namespace ampkit::cpu {

/// Elements per block of the global gradient norm: each block's sum of squares is an fp64 sum
/// over kGradNormLanes interleaved lanes (lane k takes the elements k, k + lanes, ... of the
/// block in order; the lanes are then added in lane order), and the block sums are added to the
/// total in block order, view after view. Fixed, so the norm never depends on the thread count.
inline constexpr std::int64_t kGradNormBlock = 4096;
inline constexpr int kGradNormLanes = 8;

/// The fp32 AdamW step, OpenMP over blocks of elements. The scalars are computed in double and
/// rounded once to float: c1 = 1 - beta1, c2 = 1 - beta2, step_size = lr / (1 - beta1^step),
/// rsqrt_bc2 = 1 / sqrt(1 - beta2^step), lr_wd = lr * weight_decay. Then per element, in fp32:
///   g = grad * grad_scale;  m = beta1 m + c1 g;  v = beta2 v + c2 (g g)
///   param = param - (step_size (m / (sqrt(v) rsqrt_bc2 + eps)) + lr_wd param)
///   param_copy = param rounded once.
void adamw_cpu(const ops::AdamWProblem& p);
/// The fp32 SGD step, OpenMP over blocks of elements. Per element, in fp32:
///   g = grad * grad_scale + weight_decay * param
///   momentum != 0: buf = momentum buf + g; param = param - lr buf
///   momentum == 0: buf = g (when given; the old buffer is not read); param = param - lr g
///   param_copy = param rounded once.
void sgd_cpu(const ops::SgdProblem& p);
/// fp64 sums of squares over kGradNormBlock-element blocks (see above), OpenMP over the blocks
/// of one view (a fixed number of blocks per parallel region, partials on the stack); sqrt of the
/// total.
double global_grad_norm_cpu(const ops::ViewsProblem& p);
/// Exponent bits tested per element (no float conversion), OpenMP over blocks.
bool all_finite_cpu(const ops::ViewsProblem& p);

/// Double math, each output (param, m, v, buf) rounded once to f32; param_copy is the stored
/// f32 param rounded once to its dtype.
void adamw_reference(const ops::AdamWProblem& p);
void sgd_reference(const ops::SgdProblem& p);
/// The squares summed in double one element after the other, view after view; sqrt.
double global_grad_norm_reference(const ops::ViewsProblem& p);
/// std::isfinite of every element widened to float.
bool all_finite_reference(const ops::ViewsProblem& p);

/// Best first, reference last.
std::span<const ops::AdamWEntry> adamw_kernels();
std::span<const ops::SgdEntry> sgd_kernels();
std::span<const ops::GradNormEntry> global_grad_norm_kernels();
std::span<const ops::AllFiniteEntry> all_finite_kernels();
/// The multi-tensor step on the cpu: multi_tensor_step_cpu runs every stage with the
/// per-parameter ops (the selected kernels: the trainer's bits), multi_tensor_step_reference with
/// the reference kernels (adamw_reference, sgd_reference, the plain norm and check).
std::span<const ops::MultiTensorEntry> multi_tensor_step_kernels();

}  // namespace ampkit::cpu
