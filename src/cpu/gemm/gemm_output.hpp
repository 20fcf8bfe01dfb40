// Output rounding shared by the GEMM engines (kernels layer, internal): one rounding from a wide
// value to the output dtype, the fp16 flush/count rule, and the bias-gradient writer.
// Called by gemm_reference.cpp and by the engines (via gemm_driver.hpp) for bias gradients.
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"
#include "cpu/gemm/gemm_kernels.hpp"

namespace ampkit::cpu {

/// Stores x rounded once to t (round_to_dtype, core/element.hpp) at element i of base. For f16: a result that rounds to
/// a non-zero subnormal is counted in counters.fp16_subnormal_outputs and, when flush, written as ±0.
void gemm_store_rounded(void* base, std::int64_t i, DType t, double x, bool flush, ops::GemmCounters& counters);

/// Writes the bias gradient: bias_grad[i] = sums[i] (+ bias_grad[i] when accumulating), one
/// rounding to epilogue.bias_dtype from double. Never flushed and not counted, whatever the fp16
/// mode: on the hardware the modes model, bias-gradient reductions run on the vector units,
/// which keep fp16 subnormals (docs/DESIGN.md, "Bias gradients under the fp16 modes").
void gemm_write_bias_grad(const ops::GemmProblem& problem, const double* sums, std::int64_t length);

/// The k block of gemm_operand_sums (summed in fp32, the blocks combined in double). An engine
/// that sums an operand while packing or streaming it uses the same blocks and order, so the same
/// bits (the skinny engines' dot form: the same blocks, each summed in lanes; docs/GEMM.md).
constexpr std::int64_t gemm_operand_sum_block = 256;

/// BGRADA / BGRADB sums of the operands as given (fp16 widened exactly; no flush, no bf16
/// rounding, whatever the fp16 mode of the product), for every engine and the reference:
/// fixed blocks of 256 along k summed in fp32, the block sums combined in double in k order
/// (independent of the thread count). sums: length m (BGRADA) or n (BGRADB).
void gemm_operand_sums(const ops::GemmProblem& problem, double* sums);

/// A thread-local (calling thread), grow-only, 4096-byte aligned scratch area of at least `bytes`
/// bytes, reused across calls (fresh pages are expensive). Valid until the next call on the
/// same thread or release_gemm_workspace(). Throws Error (out_of_memory) when it cannot grow.
void* gemm_workspace(std::size_t bytes);

}  // namespace ampkit::cpu
