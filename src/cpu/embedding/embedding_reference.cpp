// Embedding references (kernels layer): plain loops, double math, one rounding per output. The
// last entries of the embedding lists; the tests compare the kernels with them. The backward
// scans every token for every row (O(vocab * tokens)), so it needs no scratch beyond one row.
#include <algorithm>
#include <vector>

#include "cpu/elementwise/element_io.hpp"
#include "cpu/embedding/embedding_kernels.hpp"

namespace ampkit::cpu {

void embedding_forward_reference(const ops::EmbeddingForwardProblem& p) {
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    const void* src = row_address(p.table, p.table_dtype, p.table_row_stride, p.ids[t]);
    void* dst = row_address(p.out, p.out_dtype, p.out_row_stride, t);
    for (std::int64_t j = 0; j < p.dim; ++j)
      store_double(dst, p.out_dtype, j, double{load_element(src, p.table_dtype, j)});
  }
}

void embedding_backward_reference(const ops::EmbeddingBackwardProblem& p) {
  std::vector<double> sum(static_cast<std::size_t>(p.dim));
  for (std::int64_t v = 0; v < p.vocab; ++v) {
    bool hit = false;
    std::fill(sum.begin(), sum.end(), 0.0);
    for (std::int64_t t = 0; t < p.tokens; ++t) {
      if (p.ids[t] != v) continue;
      hit = true;
      const void* g = row_address(p.dout, p.dout_dtype, p.dout_row_stride, t);
      for (std::int64_t j = 0; j < p.dim; ++j)
        sum[static_cast<std::size_t>(j)] += double{load_element(g, p.dout_dtype, j)};
    }
    if (!hit && p.accumulate) continue;
    void* dst = row_address(p.dtable, p.dtable_dtype, p.dtable_row_stride, v);
    for (std::int64_t j = 0; j < p.dim; ++j) {
      const double old = p.accumulate ? double{load_element(dst, p.dtable_dtype, j)} : 0.0;
      store_double(dst, p.dtable_dtype, j,
                   p.accumulate ? old + sum[static_cast<std::size_t>(j)] : sum[static_cast<std::size_t>(j)]);
    }
  }
}

}  // namespace ampkit::cpu
