// Elementwise and row-sum references (kernels layer): plain loops, double math, one rounding per
// output. The last entry of elementwise_kernels() and sum_rows_kernels(); the tests compare the
// kernels with them.
#include "cpu/elementwise/element_io.hpp"
#include "cpu/elementwise/elementwise_kernels.hpp"

namespace ampkit::cpu {

void elementwise_reference(const ops::ElementwiseProblem& p) {
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const void* a = row_address(p.a.data, p.a.dtype, p.a.row_stride, r);
    void* out = row_address(p.out, p.out_dtype, p.out_row_stride, r);
    if (p.b.data != nullptr) {
      const void* b = row_address(p.b.data, p.b.dtype, p.b.row_stride, r);
      for (std::int64_t j = 0; j < p.n; ++j)
        store_double(out, p.out_dtype, j,
                     double{load_element(a, p.a.dtype, j)} + double{load_element(b, p.b.dtype, j)});
    } else {
      for (std::int64_t j = 0; j < p.n; ++j)
        store_double(out, p.out_dtype, j, double{p.alpha} * double{load_element(a, p.a.dtype, j)});
    }
  }
}

void sum_rows_reference(const ops::SumRowsProblem& p) {
  for (std::int64_t j = 0; j < p.n; ++j) {
    double sum = p.accumulate ? double{load_element(p.out, p.out_dtype, j)} : 0.0;
    for (std::int64_t r = 0; r < p.rows; ++r)
      sum += load_element(row_address(p.x, p.x_dtype, p.x_row_stride, r), p.x_dtype, j);
    store_double(p.out, p.out_dtype, j, sum);
  }
}

}  // namespace ampkit::cpu
