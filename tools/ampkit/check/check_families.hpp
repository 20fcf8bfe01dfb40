// The kernel families of `ampkit check kernels` (tools layer, check/), one file each
// (<family>_check.cpp). Each runs its cases at the reference kernels and at `isa` on fresh random
// inputs from `seed`, compares them with the bounds of ampkit/numerics/error_bounds.hpp and adds
// one result per op and kernel that ran. `quick` keeps to a few small shapes. Each leaves the ISA
// cap set; the caller restores it.
#pragma once

#include <cstdint>

#include "ampkit/device/cpu.hpp"
#include "tools/ampkit/check/check_result.hpp"

namespace ampkit::tools::check {

/// GEMM: shapes (blocked and skinny), op(A)/op(B), dtypes and fp16 modes, every epilogue kind.
void check_gemm(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);
/// LayerNorm / RMSNorm forward and backward, every x / parameter dtype mix.
void check_norms(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);
/// GELU forward and backward, tanh and erf, every dtype mix.
void check_activation(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);
/// Causal attention forward and backward (plain and accumulating), uniform and mixed dtypes.
void check_attention(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);
/// convert between every pair of f32, bf16, f16, specials included (bit-exact).
void check_convert(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);
/// add, add_accumulate, add_row_vector, scale, sum_rows, every dtype mix.
void check_elementwise(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);
/// embedding forward (bit-exact) and backward (plain and accumulating), every dtype pair.
void check_embedding(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);
/// adamw_step, sgd_step (with and without momentum), global_grad_norm, all_finite.
void check_optimizers(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);
/// softmax cross-entropy forward and backward, every logits / dlogits dtype.
void check_cross_entropy(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);

}  // namespace ampkit::tools::check
