// The row-sum kernel (kernels layer): out[j] (+)= sum over rows of x[r, j] — the bias gradient.
// Per column: fp32 partials of kSumRowsBlock consecutive rows (rows in order), added to the
// column total in block order, then (when accumulating) to the old value; one rounding at the
// store. OpenMP over chunks of kColumns columns, so the order of every sum is fixed and the bits
// never depend on the thread count. Called through sum_rows_kernels() by the elementwise front end.
#include <algorithm>

#include "ampkit/core/threading.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "cpu/elementwise/elementwise_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kColumns = 64;

// x: [rows, n] (row stride x_row_stride) -> out: [n].
template <DType X, DType O>
void sum_rows_typed(const ops::SumRowsProblem& p) {
  const std::int64_t chunks = (p.n + kColumns - 1) / kColumns;
  const bool parallel = chunks > 1 && p.rows * p.n >= (1 << 14);
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (parallel)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t j0 = c * kColumns;
    const std::int64_t width = std::min(kColumns, p.n - j0);
    float total[kColumns] = {};
    for (std::int64_t r0 = 0; r0 < p.rows; r0 += kSumRowsBlock) {
      const std::int64_t r1 = std::min(p.rows, r0 + kSumRowsBlock);
      float block[kColumns] = {};
      for (std::int64_t r = r0; r < r1; ++r) {
        const void* x = row_address(p.x, X, p.x_row_stride, r);
        for (std::int64_t j = 0; j < width; ++j) block[j] += load_as<X>(x, j0 + j);
      }
      for (std::int64_t j = 0; j < width; ++j) total[j] += block[j];
    }
    for (std::int64_t j = 0; j < width; ++j) {
      const float old = p.accumulate ? load_as<O>(p.out, j0 + j) : 0.0f;
      store_as<O>(p.out, j0 + j, p.accumulate ? old + total[j] : total[j]);
    }
  }
}

}  // namespace

void sum_rows_cpu(const ops::SumRowsProblem& p) {
  visit_dtype(p.x_dtype, [&]<DType X>() { visit_dtype(p.out_dtype, [&]<DType O>() { sum_rows_typed<X, O>(p); }); });
}

}  // namespace ampkit::cpu
