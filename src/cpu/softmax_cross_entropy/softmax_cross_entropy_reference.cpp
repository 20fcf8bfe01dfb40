// Softmax cross-entropy reference (kernels layer): plain loops, double math, one rounding per
// output. The last entries of the softmax cross-entropy lists; the tests compare the kernels with
// it and take finite differences of softmax_cross_entropy_loss_reference.
#include <algorithm>
#include <cmath>

#include "cpu/elementwise/element_io.hpp"
#include "cpu/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit::cpu {
namespace {

// Row r's log-sum-exp in double.
double row_lse(const ops::SoftmaxCrossEntropyProblem& p, std::int64_t r) {
  const void* x = row_address(p.logits, p.logits_dtype, p.logits_row_stride, r);
  double m = -INFINITY;
  for (std::int64_t j = 0; j < p.classes; ++j) m = std::max(m, double{load_element(x, p.logits_dtype, j)});
  double sum = 0.0;
  for (std::int64_t j = 0; j < p.classes; ++j) sum += std::exp(double{load_element(x, p.logits_dtype, j)} - m);
  return m + std::log(sum);
}

}  // namespace

double softmax_cross_entropy_loss_reference(const ops::SoftmaxCrossEntropyProblem& p) {
  double total = 0.0;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const void* x = row_address(p.logits, p.logits_dtype, p.logits_row_stride, r);
    total += row_lse(p, r) - double{load_element(x, p.logits_dtype, p.targets[r])};
  }
  return total / static_cast<double>(p.rows);
}

void softmax_cross_entropy_forward_reference(const ops::SoftmaxCrossEntropyProblem& p) {
  const double loss = softmax_cross_entropy_loss_reference(p);
  for (std::int64_t r = 0; r < p.rows; ++r) p.lse[r] = static_cast<float>(row_lse(p, r));
  *p.loss = static_cast<float>(loss);
}

void softmax_cross_entropy_backward_reference(const ops::SoftmaxCrossEntropyProblem& p) {
  const double scale = double{p.dloss} / static_cast<double>(p.rows);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const void* x = row_address(p.logits, p.logits_dtype, p.logits_row_stride, r);
    void* dx = row_address(p.dlogits, p.dlogits_dtype, p.dlogits_row_stride, r);
    for (std::int64_t j = 0; j < p.classes; ++j) {
      const double prob = std::exp(double{load_element(x, p.logits_dtype, j)} - double{p.lse[r]});
      store_double(dx, p.dlogits_dtype, j, scale * (j == p.targets[r] ? prob - 1.0 : prob));
    }
  }
}

}  // namespace ampkit::cpu
