// Optimizer references (kernels layer): plain loops in double. The steps round each f32 output
// (param, m, v, momentum buffer) once and write param_copy from the stored f32 param; the norm
// adds the squares one element after the other. The last entries of the optimizer lists; the
// tests compare the kernels with them.
#include <cmath>

#include "cpu/elementwise/element_io.hpp"
#include "cpu/optimizer/optimizer_kernels.hpp"

namespace ampkit::cpu {

void adamw_reference(const ops::AdamWProblem& p) {
  const double beta1 = p.beta1, beta2 = p.beta2, lr = p.lr, eps = p.eps, wd = p.weight_decay;
  const double bc1 = 1.0 - std::pow(beta1, static_cast<double>(p.step));
  const double bc2 = 1.0 - std::pow(beta2, static_cast<double>(p.step));
  for (std::int64_t i = 0; i < p.n; ++i) {
    const double g = double{load_element(p.grad, p.grad_dtype, i)} * double{p.grad_scale};
    const double m = beta1 * double{p.m[i]} + (1.0 - beta1) * g;
    const double v = beta2 * double{p.v[i]} + (1.0 - beta2) * g * g;
    const double old = p.param[i];
    const double updated = old - lr * (m / bc1) / (std::sqrt(v / bc2) + eps) - lr * wd * old;
    p.m[i] = static_cast<float>(m);
    p.v[i] = static_cast<float>(v);
    p.param[i] = static_cast<float>(updated);
    if (p.param_copy != nullptr) store_element(p.param_copy, p.param_copy_dtype, i, p.param[i]);
  }
}

void sgd_reference(const ops::SgdProblem& p) {
  const double lr = p.lr, mu = p.momentum, wd = p.weight_decay;
  for (std::int64_t i = 0; i < p.n; ++i) {
    const double old = p.param[i];
    const double g = double{load_element(p.grad, p.grad_dtype, i)} * double{p.grad_scale} + wd * old;
    double d = g;
    if (mu != 0.0) d = mu * double{p.momentum_buffer[i]} + g;
    if (p.momentum_buffer != nullptr) p.momentum_buffer[i] = static_cast<float>(d);
    p.param[i] = static_cast<float>(old - lr * d);
    if (p.param_copy != nullptr) store_element(p.param_copy, p.param_copy_dtype, i, p.param[i]);
  }
}

double global_grad_norm_reference(const ops::ViewsProblem& p) {
  double total = 0.0;
  for (const TensorView& view : p.views) {
    const std::int64_t n = view.numel();
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = load_element(view.data, view.dtype, i);
      total += e * e;
    }
  }
  return std::sqrt(total);
}

bool all_finite_reference(const ops::ViewsProblem& p) {
  for (const TensorView& view : p.views) {
    const std::int64_t n = view.numel();
    for (std::int64_t i = 0; i < n; ++i)
      if (!std::isfinite(load_element(view.data, view.dtype, i))) return false;
  }
  return true;
}

}  // namespace ampkit::cpu
