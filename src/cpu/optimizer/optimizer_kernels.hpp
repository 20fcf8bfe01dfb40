// The optimizer kernels of the CPU backend (kernels layer, internal): the entry points and the
// kernel lists, best first, reference last, over the neutral problems of
// src/ops/optimizer/optimizer_kernels.hpp. Defined in src/cpu/optimizer/; the CPU backend puts the
// lists in its row of the op table; the tests run each entry.
#pragma once

#include <cstdint>
#include <span>

#include "ops/optimizer/optimizer_kernels.hpp"

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
