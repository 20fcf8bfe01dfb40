// Front end of adamw_step, sgd_step, global_grad_norm and all_finite (ops layer): validates every
// operand and hyper-parameter (include/ampkit/ops/optimizer.hpp) while building the kernel
// problem, and runs the first entry of the function's kernel list that takes it; the *_check and
// *_kernel_name queries decode the same way. Nothing is written on a rejected call; an accepted
// call allocates nothing.
#include "ampkit/ops/optimizer.hpp"

#include <cmath>
#include <cstdio>

#include "ampkit/core/error.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/operand_checks.hpp"
#include "ops/optimizer/optimizer_kernels.hpp"

namespace ampkit {
namespace {

// A present, contiguous f32/bf16/f16 view in cpu memory with data; returns its byte size.
std::int64_t check_operand(const char* fn, const char* name, const TensorView& v, const char* what, ops::Stage stage) {
  ops::check_given(fn, name, v, what);
  const std::int64_t bytes = ops::check_float_view(fn, name, v);
  ops::check_data(fn, name, v, "elements", stage);
  return bytes;
}

void check_f32(const char* fn, const char* name, const TensorView& v, const char* what) {
  if (v.dtype != DType::f32) fail(fn, name, " dtype must be f32 (", what, "), but got ", dtype_name(v.dtype));
}

void check_non_negative(const char* fn, const char* name, float value) {
  if (!(std::isfinite(value) && value >= 0.0f)) fail(fn, name, " must be finite and >= 0, but got ", value);
}

void check_unit_interval(const char* fn, const char* name, float value) {
  if (!(value >= 0.0f && value < 1.0f)) fail(fn, name, " must be in [0, 1), but got ", value);
}

// param_copy, when present: contiguous bf16/f16/f32 of param's shape.
std::int64_t check_param_copy(const char* fn, const TensorView& param, const TensorView& copy, ops::Stage stage) {
  if (!copy.present) return 0;
  const std::int64_t bytes = check_operand(fn, "param_copy", copy, "the compute copy", stage);
  ops::check_same_shape(fn, "param", param, "param_copy", copy);
  return bytes;
}

// Every view of a list: present, contiguous f32/bf16/f16 in cpu memory, with data.
void check_views(const char* fn, const char* list, std::span<const TensorView> views, ops::Stage stage) {
  for (std::size_t i = 0; i < views.size(); ++i) {
    char name[48];
    std::snprintf(name, sizeof name, "%s[%zu]", list, i);
    check_operand(fn, name, views[i], "an element of the list", stage);
  }
}

ops::AdamWProblem adamw_problem(const AdamWArgs& a, ops::Stage stage = ops::Stage::call) {
  const char* fn = "adamw_step";
  const std::int64_t param_bytes = check_operand(fn, "param", a.param, "the f32 master weights", stage);
  check_f32(fn, "param", a.param, "the master weights");
  const std::int64_t grad_bytes = check_operand(fn, "grad", a.grad, "the gradient", stage);
  ops::check_same_shape(fn, "param", a.param, "grad", a.grad);
  const std::int64_t m_bytes = check_operand(fn, "m", a.m, "the first moment", stage);
  check_f32(fn, "m", a.m, "the first moment");
  ops::check_same_shape(fn, "param", a.param, "m", a.m);
  const std::int64_t v_bytes = check_operand(fn, "v", a.v, "the second moment", stage);
  check_f32(fn, "v", a.v, "the second moment");
  ops::check_same_shape(fn, "param", a.param, "v", a.v);
  const std::int64_t copy_bytes = check_param_copy(fn, a.param, a.param_copy, stage);
  check_non_negative(fn, "lr", a.lr);
  check_unit_interval(fn, "beta1", a.beta1);
  check_unit_interval(fn, "beta2", a.beta2);
  check_non_negative(fn, "eps", a.eps);
  check_non_negative(fn, "weight_decay", a.weight_decay);
  ops::check_finite(fn, "grad_scale", a.grad_scale);
  if (a.step < 1) fail(fn, "step must be >= 1 (1-based, for bias correction), but got ", a.step);
  ops::OverlapCheck overlap(fn, stage);
  overlap.add("param", a.param, param_bytes, true);
  overlap.add("grad", a.grad, grad_bytes, false);
  overlap.add("m", a.m, m_bytes, true);
  overlap.add("v", a.v, v_bytes, true);
  overlap.add("param_copy", a.param_copy, copy_bytes, true);
  overlap.run();
  ops::AdamWProblem p;
  p.n = a.param.numel();
  p.param = static_cast<float*>(a.param.data);
  p.grad = a.grad.data;
  p.grad_dtype = a.grad.dtype;
  p.m = static_cast<float*>(a.m.data);
  p.v = static_cast<float*>(a.v.data);
  if (a.param_copy.present) {
    p.param_copy = a.param_copy.data;
    p.param_copy_dtype = a.param_copy.dtype;
  }
  p.lr = a.lr;
  p.beta1 = a.beta1;
  p.beta2 = a.beta2;
  p.eps = a.eps;
  p.weight_decay = a.weight_decay;
  p.grad_scale = a.grad_scale;
  p.step = a.step;
  return p;
}

ops::SgdProblem sgd_problem(const SgdArgs& a, ops::Stage stage = ops::Stage::call) {
  const char* fn = "sgd_step";
  const std::int64_t param_bytes = check_operand(fn, "param", a.param, "the f32 master weights", stage);
  check_f32(fn, "param", a.param, "the master weights");
  const std::int64_t grad_bytes = check_operand(fn, "grad", a.grad, "the gradient", stage);
  ops::check_same_shape(fn, "param", a.param, "grad", a.grad);
  check_non_negative(fn, "lr", a.lr);
  check_unit_interval(fn, "momentum", a.momentum);
  check_non_negative(fn, "weight_decay", a.weight_decay);
  ops::check_finite(fn, "grad_scale", a.grad_scale);
  std::int64_t buffer_bytes = 0;
  if (a.momentum != 0.0f || a.momentum_buffer.present) {
    buffer_bytes = check_operand(fn, "momentum_buffer", a.momentum_buffer, "momentum is not 0",
                                 stage);  // absent: only when momentum == 0
    check_f32(fn, "momentum_buffer", a.momentum_buffer, "the momentum buffer");
    ops::check_same_shape(fn, "param", a.param, "momentum_buffer", a.momentum_buffer);
  }
  const std::int64_t copy_bytes = check_param_copy(fn, a.param, a.param_copy, stage);
  ops::OverlapCheck overlap(fn, stage);
  overlap.add("param", a.param, param_bytes, true);
  overlap.add("grad", a.grad, grad_bytes, false);
  overlap.add("momentum_buffer", a.momentum_buffer, buffer_bytes, true);
  overlap.add("param_copy", a.param_copy, copy_bytes, true);
  overlap.run();
  ops::SgdProblem p;
  p.n = a.param.numel();
  p.param = static_cast<float*>(a.param.data);
  p.grad = a.grad.data;
  p.grad_dtype = a.grad.dtype;
  if (a.momentum_buffer.present) p.momentum_buffer = static_cast<float*>(a.momentum_buffer.data);
  if (a.param_copy.present) {
    p.param_copy = a.param_copy.data;
    p.param_copy_dtype = a.param_copy.dtype;
  }
  p.lr = a.lr;
  p.momentum = a.momentum;
  p.weight_decay = a.weight_decay;
  p.grad_scale = a.grad_scale;
  return p;
}

}  // namespace

void adamw_step(const AdamWArgs& a) {
  const ops::AdamWProblem p = adamw_problem(a);
  if (p.n == 0) return;
  ops::select_kernel(ops::backend(Device::cpu).kernels().adamw_step, p).run(p);
}

void sgd_step(const SgdArgs& a) {
  const ops::SgdProblem p = sgd_problem(a);
  if (p.n == 0) return;
  ops::select_kernel(ops::backend(Device::cpu).kernels().sgd_step, p).run(p);
}

std::string adamw_check(const AdamWArgs& args) noexcept {
  return ops::check_message("adamw_step", [&] { adamw_problem(args); });
}

std::string adamw_descriptor_check(const AdamWArgs& args) noexcept {
  return ops::check_message("adamw_step", [&] { adamw_problem(args, ops::Stage::descriptor); });
}

std::string sgd_check(const SgdArgs& args) noexcept {
  return ops::check_message("sgd_step", [&] { sgd_problem(args); });
}

std::string sgd_descriptor_check(const SgdArgs& args) noexcept {
  return ops::check_message("sgd_step", [&] { sgd_problem(args, ops::Stage::descriptor); });
}

const char* adamw_kernel_name(const AdamWArgs& args) {
  return ops::select_kernel(ops::backend(Device::cpu).kernels().adamw_step, adamw_problem(args)).name;
}

const char* sgd_kernel_name(const SgdArgs& args) {
  return ops::select_kernel(ops::backend(Device::cpu).kernels().sgd_step, sgd_problem(args)).name;
}

double global_grad_norm(std::span<const TensorView> grads) {
  const char* fn = "global_grad_norm";
  check_views(fn, "grads", grads, ops::Stage::call);
  const ops::ViewsProblem p{grads};
  return ops::select_kernel(ops::backend(Device::cpu).kernels().global_grad_norm, p).run(p);
}

bool all_finite(std::span<const TensorView> views) {
  const char* fn = "all_finite";
  check_views(fn, "views", views, ops::Stage::call);
  const ops::ViewsProblem p{views};
  return ops::select_kernel(ops::backend(Device::cpu).kernels().all_finite, p).run(p);
}

}  // namespace ampkit
