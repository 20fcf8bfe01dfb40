// The LayerNorm/RMSNorm kernels of the CPU backend (kernels layer, internal): the kernel entry
// points of every ISA and the kernel lists, best first, reference last, over the neutral problem of
// src/ops/norm/norm_kernels.hpp. Defined in src/cpu/norm/; the CPU backend
// (src/cpu/common/cpu_backend.cpp) puts the lists in its row of the op table; the tests run each
// entry. Mirrors src/cuda/<op>/*_cuda.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "ops/norm/norm_kernels.hpp"

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

/// Per-calling-thread fp32 scratch of at least `floats` elements, 64-byte aligned. Grows (heap)
/// only when a call needs more than any earlier call on this thread; never shrinks.
float* norm_scratch(std::int64_t floats);

/// A second per-calling-thread fp32 scratch, 64-byte aligned, for rows widened to f32 (kept
/// apart from norm_scratch, which may hold dgamma/dbeta totals at the same time). Grows the same way.
float* norm_row_scratch(std::int64_t floats);

}  // namespace ampkit::cpu
