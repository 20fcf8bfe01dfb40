// The LayerNorm/RMSNorm kernel list (kernels layer, internal): the validated problem the front
// end hands to a kernel, the kernel entry points of every ISA, and one list of them, best first,
// reference last. Read by norm_front_end.cpp (dispatch), norm_kernel_name and the tests.
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/device/cpu.hpp"
#include "ampkit/core/dtype.hpp"

namespace ampkit::cpu {

/// Rows per block of the dgamma/dbeta reduction: fp32 partials of 32 consecutive rows are summed
/// in row order, then the block partials are added in block order. Fixed, so results never
/// depend on the thread count (docs/NUMERICS.md).
inline constexpr std::int64_t kNormRowBlock = 32;

/// A forward call after validation. rows >= 1, n >= 1, x and y non-null and not overlapping
/// anything; gamma/beta/mean/rstd null when absent (beta and mean always null for RMSNorm).
struct NormForwardProblem {
  std::int64_t rows = 0;
  std::int64_t n = 0;
  const void* x = nullptr;      // [rows, n], x_dtype
  DType x_dtype = DType::f32;   // also y's dtype
  const void* gamma = nullptr;  // [n], param_dtype
  const void* beta = nullptr;   // [n], param_dtype
  DType param_dtype = DType::f32;
  float eps = 0.0f;
  void* y = nullptr;            // [rows, n], x_dtype
  float* mean = nullptr;        // [rows]
  float* rstd = nullptr;        // [rows]
};

/// A backward call after validation. rows >= 1, n >= 1, at least one of dx/dgamma/dbeta present,
/// dy non-null; x, rstd (and mean for LayerNorm) non-null when dx or dgamma is present; gamma
/// non-null when dgamma is present. gamma, dgamma and dbeta share param_dtype.
struct NormBackwardProblem {
  std::int64_t rows = 0;
  std::int64_t n = 0;
  const void* dy = nullptr;     // [rows, n], x_dtype
  const void* x = nullptr;      // [rows, n], x_dtype
  DType x_dtype = DType::f32;   // also dx's dtype
  const float* mean = nullptr;  // [rows]
  const float* rstd = nullptr;  // [rows]
  const void* gamma = nullptr;  // [n], param_dtype (absent: 1)
  DType param_dtype = DType::f32;
  void* dx = nullptr;           // [rows, n], x_dtype
  void* dgamma = nullptr;       // [n], param_dtype
  void* dbeta = nullptr;        // [n], param_dtype
  bool accumulate = false;      // dgamma/dbeta += instead of =
};

using NormForwardFn = void (*)(const NormForwardProblem&);
using NormBackwardFn = void (*)(const NormBackwardProblem&);

/// One implementation of the four operations for one ISA; every entry supports every dtype mix.
struct NormKernel {
  const char* name;  // "avx512bf16", "avx512", "avx2", "ref"
  Isa isa;
  bool needs_bf16_instructions;  // AVX512_BF16 (vcvtneps2bf16 for bf16 outputs)
  const char* layer_forward_name;
  NormForwardFn layer_forward;
  const char* layer_backward_name;
  NormBackwardFn layer_backward;
  const char* rms_forward_name;
  NormForwardFn rms_forward;
  const char* rms_backward_name;
  NormBackwardFn rms_backward;
};

void layer_norm_forward_ref(const NormForwardProblem& p);
void layer_norm_backward_ref(const NormBackwardProblem& p);
void rms_norm_forward_ref(const NormForwardProblem& p);
void rms_norm_backward_ref(const NormBackwardProblem& p);

void layer_norm_forward_avx2(const NormForwardProblem& p);
void layer_norm_backward_avx2(const NormBackwardProblem& p);
void rms_norm_forward_avx2(const NormForwardProblem& p);
void rms_norm_backward_avx2(const NormBackwardProblem& p);

void layer_norm_forward_avx512bf16(const NormForwardProblem& p);
void layer_norm_backward_avx512bf16(const NormBackwardProblem& p);
void rms_norm_forward_avx512bf16(const NormForwardProblem& p);
void rms_norm_backward_avx512bf16(const NormBackwardProblem& p);

void layer_norm_forward_avx512(const NormForwardProblem& p);
void layer_norm_backward_avx512(const NormBackwardProblem& p);
void rms_norm_forward_avx512(const NormForwardProblem& p);
void rms_norm_backward_avx512(const NormBackwardProblem& p);

/// All norm kernels, best first, the reference last.
std::span<const NormKernel> norm_kernels();

/// The kernel the calls use: the one a ForcedNormKernel names, else the first entry of
/// norm_kernels() the active ISA allows (the reference is last, so there always is one).
const NormKernel& selected_norm_kernel();

/// For tests: makes every norm call of the process use kernel `k` while it lives (not nestable
/// across threads; the caller checks that k's ISA is usable).
class ForcedNormKernel {
 public:
  explicit ForcedNormKernel(const NormKernel& k);
  ~ForcedNormKernel();
  ForcedNormKernel(const ForcedNormKernel&) = delete;
  ForcedNormKernel& operator=(const ForcedNormKernel&) = delete;

 private:
  const NormKernel* previous_;
};

/// Per-calling-thread fp32 scratch of at least `floats` elements, 64-byte aligned. Grows (heap)
/// only when a call needs more than any earlier call on this thread; never shrinks.
float* norm_scratch(std::int64_t floats);

/// A second per-calling-thread fp32 scratch, 64-byte aligned, for rows widened to f32 (kept
/// apart from norm_scratch, which may hold dgamma/dbeta totals at the same time). Grows the same way.
float* norm_row_scratch(std::int64_t floats);

}  // namespace ampkit::cpu
