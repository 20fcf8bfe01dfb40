// The LayerNorm/RMSNorm kernels (kernels layer, internal): the validated problem the front end
// hands to a kernel, the kernel entry points of every ISA, and the four kernel lists (layer/rms,
// forward/backward), best first, reference last. Read by src/ops/norm (validation, dispatch,
// kernel_name, kernel_statuses) and the tests.
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/device/cpu.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// A forward call after validation. rows >= 1, n >= 1, x and y non-null and not overlapping
/// anything; gamma/beta/mean/rstd null when absent (beta and mean always null for RMSNorm).
struct NormForwardProblem {
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
  std::int64_t rows = 0;
  std::int64_t n = 0;
  const void* x = nullptr;      // [rows, n], x_dtype
  DType x_dtype = DType::f32;   // also y's dtype
  const void* gamma = nullptr;  // [n], param_dtype
  const void* beta = nullptr;   // [n], param_dtype
  DType param_dtype = DType::f32;
  float eps = 0.0f;
  void* y = nullptr;      // [rows, n], x_dtype
  float* mean = nullptr;  // [rows]
  float* rstd = nullptr;  // [rows]
};

/// A backward call after validation. rows >= 1, n >= 1, at least one of dx/dgamma/dbeta present,
/// dy non-null; x, rstd (and mean for LayerNorm) non-null when dx or dgamma is present; gamma
/// non-null when dgamma is present. gamma, dgamma and dbeta share param_dtype.
struct NormBackwardProblem {
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
  std::int64_t rows = 0;
  std::int64_t n = 0;
  const void* dy = nullptr;     // [rows, n], x_dtype
  const void* x = nullptr;      // [rows, n], x_dtype
  DType x_dtype = DType::f32;   // also dx's dtype
  const float* mean = nullptr;  // [rows]
  const float* rstd = nullptr;  // [rows]
  const void* gamma = nullptr;  // [n], param_dtype (absent: 1)
  DType param_dtype = DType::f32;
  void* dx = nullptr;       // [rows, n], x_dtype
  void* dgamma = nullptr;   // [n], param_dtype
  void* dbeta = nullptr;    // [n], param_dtype
  bool accumulate = false;  // dgamma/dbeta += instead of =
};

using NormForwardFn = void (*)(const NormForwardProblem&);
using NormBackwardFn = void (*)(const NormBackwardProblem&);

/// Entries of the four kernel lists (src/ops/kernel_registry.hpp). Every entry supports every
/// dtype mix and shape, so no entry declines a valid problem; they differ only in what the
/// machine must have.
using NormForwardEntry = ops::KernelEntry<NormForwardProblem, NormForwardFn>;
using NormBackwardEntry = ops::KernelEntry<NormBackwardProblem, NormBackwardFn>;

}  // namespace ampkit::ops

namespace ampkit::cpu {

/// Rows per block of the dgamma/dbeta reduction: fp32 partials of 32 consecutive rows are summed
/// in row order, then the block partials are added in block order. Fixed, so results never
/// depend on the thread count (docs/NUMERICS.md).
inline constexpr std::int64_t kNormRowBlock = 32;

// The kernels; entry, function and kernel name are one: <norm>_norm_<fwd|bwd>_<isa>. The
// fwd/bwd functions live in norm_fwd_<isa>.cpp / norm_bwd_<isa>.cpp, the reference in
// norm_reference.cpp.
void layer_norm_fwd_ref(const ops::NormForwardProblem& p);
void layer_norm_bwd_ref(const ops::NormBackwardProblem& p);
void rms_norm_fwd_ref(const ops::NormForwardProblem& p);
void rms_norm_bwd_ref(const ops::NormBackwardProblem& p);

void layer_norm_fwd_avx2(const ops::NormForwardProblem& p);
void layer_norm_bwd_avx2(const ops::NormBackwardProblem& p);
void rms_norm_fwd_avx2(const ops::NormForwardProblem& p);
void rms_norm_bwd_avx2(const ops::NormBackwardProblem& p);

void layer_norm_fwd_avx512(const ops::NormForwardProblem& p);
void layer_norm_bwd_avx512(const ops::NormBackwardProblem& p);
void rms_norm_fwd_avx512(const ops::NormForwardProblem& p);
void rms_norm_bwd_avx512(const ops::NormBackwardProblem& p);

void layer_norm_fwd_avx512bf16(const ops::NormForwardProblem& p);
void layer_norm_bwd_avx512bf16(const ops::NormBackwardProblem& p);
void rms_norm_fwd_avx512bf16(const ops::NormForwardProblem& p);
void rms_norm_bwd_avx512bf16(const ops::NormBackwardProblem& p);

/// The kernel lists of the four operations, best first, the reference last
/// (norm_kernel_list.cpp). The front end selects from them; the tests run each entry.
std::span<const ops::NormForwardEntry> layer_norm_fwd_kernels();
std::span<const ops::NormBackwardEntry> layer_norm_bwd_kernels();
std::span<const ops::NormForwardEntry> rms_norm_fwd_kernels();
std::span<const ops::NormBackwardEntry> rms_norm_bwd_kernels();

}  // namespace ampkit::cpu

namespace ampkit::cpu {

/// Per-calling-thread fp32 scratch of at least `floats` elements, 64-byte aligned. Grows (heap)
/// only when a call needs more than any earlier call on this thread; never shrinks.
float* norm_scratch(std::int64_t floats);

/// A second per-calling-thread fp32 scratch, 64-byte aligned, for rows widened to f32 (kept
/// apart from norm_scratch, which may hold dgamma/dbeta totals at the same time). Grows the same way.
float* norm_row_scratch(std::int64_t floats);

}  // namespace ampkit::cpu
