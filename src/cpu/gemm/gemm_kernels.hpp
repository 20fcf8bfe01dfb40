// The GEMM engines of the CPU backend (kernels layer, internal): the kernel entry points of every
// ISA and the kernel lists, best first, reference last, over the neutral problem of
// src/ops/gemm/gemm_kernels.hpp. Defined in src/cpu/gemm/; the CPU backend
// (src/cpu/common/cpu_backend.cpp) puts the lists in its row of the op table; the tests run each
// entry. Mirrors src/cuda/<op>/*_cuda.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "ops/gemm/gemm_kernels.hpp"

namespace ampkit::cpu {

/// The largest min(m, n) the skinny engines take (see docs/GEMM.md for the measurement).
inline constexpr std::int64_t gemm_skinny_max = 16;

/// All GEMM kernels, best first, the reference last.
std::span<const ops::GemmKernel> gemm_kernels();
/// The CPU backend's ops::GemmCallFn (gemm_kernel_list.cpp): gemm_call_on(gemm_kernels(), ...).
const ops::GemmKernel& gemm_call(const ops::GemmProblem& problem, ops::GemmCounters& counters);

/// Writes the bias gradient alone, for calls whose product is skipped (alpha == 0) or empty
/// (m == 0 or n == 0): BGRADA / BGRADB sum their operand as given; the row sums of an empty D
/// are 0. Defined with the engines' output code (gemm_output.cpp).
void gemm_write_bias_grad_only(const ops::GemmProblem& problem);

/// Why a skinny engine declines `problem` (min(m, n) is 0 or above gemm_skinny_max), or nullptr.
const char* gemm_skinny_declines(const ops::GemmProblem& problem);

// The engines (one per kernel-list entry).
void gemm_reference(const ops::GemmProblem& problem, ops::GemmCounters& counters);
void gemm_run_f32_avx512(const ops::GemmProblem& problem, ops::GemmCounters& counters);
void gemm_run_bf16_avx512bf16(const ops::GemmProblem& problem, ops::GemmCounters& counters);
void gemm_run_bf16_amx(const ops::GemmProblem& problem, ops::GemmCounters& counters);
void gemm_run_f32_avx2(const ops::GemmProblem& problem, ops::GemmCounters& counters);
void gemm_run_skinny_f32_avx512(const ops::GemmProblem& problem, ops::GemmCounters& counters);
void gemm_run_skinny_f32_avx2(const ops::GemmProblem& problem, ops::GemmCounters& counters);

}  // namespace ampkit::cpu
