// Softmax cross-entropy kernels (kernels layer): fp32 math whatever the logits dtype.
//   forward, per row r (OpenMP over rows): m = max_j x[r, j]; s = sum_j exp(x[r, j] - m) as fp32
//   partials of kSoftmaxBlock classes added in block order; lse[r] = m + log s. Then, on the
//   calling thread, loss = sum_r (lse[r] - x[r, t_r]) in fp64 in row order, / rows.
//   backward: dx[r, j] = (dloss / rows) (exp(x[r, j] - lse[r]) - [j == t_r]), one rounding.
// Every sum has a fixed order, so the bits never depend on the thread count. Called through the
// lists of softmax_cross_entropy_kernels.cpp by the front end.
#include <algorithm>
#include <cmath>

#include "ampkit/core/threading.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "cpu/math/gelu_math.hpp"
#include "cpu/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kParallelMinElements = 1 << 13;

bool parallel_rows(const ops::SoftmaxCrossEntropyProblem& p) {
  return p.rows > 1 && p.rows * p.classes >= kParallelMinElements;
}

// x: [classes] -> log sum_j exp(x[j]) in fp32.
template <DType X>
float row_log_sum_exp(const void* x, std::int64_t classes) {
  float m = load_as<X>(x, 0);
  for (std::int64_t j = 1; j < classes; ++j) {
    const float v = load_as<X>(x, j);
    m = (v > m || std::isnan(v)) ? v : m;
  }
  if (std::isinf(m) || std::isnan(m)) return m + 0.0f * m;  // +Inf -> NaN, -Inf: all -Inf -> NaN
  float sum = 0.0f;
  for (std::int64_t j0 = 0; j0 < classes; j0 += kSoftmaxBlock) {
    const std::int64_t j1 = std::min(classes, j0 + kSoftmaxBlock);
    float block = 0.0f;
    for (std::int64_t j = j0; j < j1; ++j) block += gemm_math::exp_f32(load_as<X>(x, j) - m);
    sum += block;
  }
  return m + std::log(sum);
}

template <DType X>
void forward_typed(const ops::SoftmaxCrossEntropyProblem& p) {
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (parallel_rows(p))
  for (std::int64_t r = 0; r < p.rows; ++r)
    p.lse[r] = row_log_sum_exp<X>(row_address(p.logits, X, p.logits_row_stride, r), p.classes);
  double total = 0.0;
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const void* x = row_address(p.logits, X, p.logits_row_stride, r);
    total += double{p.lse[r]} - double{load_as<X>(x, p.targets[r])};
  }
  *p.loss = static_cast<float>(total / static_cast<double>(p.rows));
}

template <DType X, DType D>
void backward_typed(const ops::SoftmaxCrossEntropyProblem& p) {
  const float scale = static_cast<float>(double{p.dloss} / static_cast<double>(p.rows));
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (parallel_rows(p))
  for (std::int64_t r = 0; r < p.rows; ++r) {
    const void* x = row_address(p.logits, X, p.logits_row_stride, r);
    void* dx = row_address(p.dlogits, D, p.dlogits_row_stride, r);
    const float lse = p.lse[r];
    const std::int64_t target = p.targets[r];
    for (std::int64_t j = 0; j < p.classes; ++j) {
      const float prob = gemm_math::exp_f32(load_as<X>(x, j) - lse);
      store_as<D>(dx, j, scale * (j == target ? prob - 1.0f : prob));
    }
  }
}

}  // namespace

void softmax_cross_entropy_forward_cpu(const ops::SoftmaxCrossEntropyProblem& p) {
  visit_dtype(p.logits_dtype, [&]<DType X>() { forward_typed<X>(p); });
}

void softmax_cross_entropy_backward_cpu(const ops::SoftmaxCrossEntropyProblem& p) {
  visit_dtype(p.logits_dtype,
              [&]<DType X>() { visit_dtype(p.dlogits_dtype, [&]<DType D>() { backward_typed<X, D>(p); }); });
}

}  // namespace ampkit::cpu
