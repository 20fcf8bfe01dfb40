// The optimizer's neutral problems (kernels layer, internal): what the optimizer front end
// (src/ops/optimizer/) hands to a kernel of any backend, and the entry types of its lists (AdamW,
// SGD, global gradient norm, finiteness check, the multi-tensor step). The CPU entries are in
// src/cpu/optimizer/optimizer_kernels.hpp, the CUDA ones in src/cuda/optimizer/.
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

/// Elements per chunk of the multi-tensor kernels: the CPU gradient norm's block (cpu::kGradNormBlock).
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
