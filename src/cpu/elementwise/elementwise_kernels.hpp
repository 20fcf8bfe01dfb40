// The elementwise and row-sum kernels of the CPU backend (kernels layer, internal): the kernel
// entry points of every ISA and the kernel lists, best first, reference last, over the neutral
// problem of src/ops/elementwise/elementwise_kernels.hpp. Defined in src/cpu/elementwise/; the CPU
// backend (src/cpu/common/cpu_backend.cpp) puts the lists in its row of the op table; the tests run
// each entry. Mirrors src/cuda/<op>/*_cuda.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "ops/elementwise/elementwise_kernels.hpp"

namespace ampkit::cpu {

/// Rows per block of sum_rows: fp32 partial sums of kSumRowsBlock consecutive rows, added to the
/// column totals in block order. Fixed, so the result never depends on the thread count.
inline constexpr std::int64_t kSumRowsBlock = 32;

/// fp32 math, OpenMP over tiles of rows.
void elementwise_cpu(const ops::ElementwiseProblem& p);
/// Double math, one rounding per output.
void elementwise_reference(const ops::ElementwiseProblem& p);
/// fp32 blocks of kSumRowsBlock rows, OpenMP over column chunks.
void sum_rows_cpu(const ops::SumRowsProblem& p);
/// Double sums over all rows (plus the old value when accumulating), one rounding.
void sum_rows_reference(const ops::SumRowsProblem& p);

/// Best first, reference last.
std::span<const ops::ElementwiseEntry> elementwise_kernels();
std::span<const ops::SumRowsEntry> sum_rows_kernels();

}  // namespace ampkit::cpu
