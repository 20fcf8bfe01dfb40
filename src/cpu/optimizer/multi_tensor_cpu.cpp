// The multi-tensor step on the cpu (kernels layer): each stage of ops::MultiTensorProblem over
// its rows in host memory. multi_tensor_step_cpu calls the per-parameter ops (convert,
// add_accumulate, global_grad_norm, all_finite) and the entries adamw_step / sgd_step select
// (their problems built here from the rows, checked once when the step was built), so a trainer
// on the multi-tensor step has the bits it had calling them one parameter at a time;
// multi_tensor_step_reference runs the reference kernels (the lists' last entries, the plain
// norm and check) and a plain accumulation loop. The decision is ops/optimizer/step_decision.hpp's, as on the GPU.
#include <cstdint>

#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "cpu/optimizer/optimizer_kernels.hpp"
#include "ops/optimizer/step_decision.hpp"

namespace ampkit::cpu {
namespace {

TensorView flat(const void* data, DType t, const std::int64_t& n) { return TensorView(data, t, &n, 1); }

// The step count the update uses, or -1 (window_miss set) when it left the caller's window.
std::int64_t windowed_step(const ops::MultiTensorProblem& p) {
  StepScalars& s = *p.scalars;
  const std::int64_t k = s.steps - p.adamw.step_base;
  if (k < 0 || k >= kStepWindow) {
    s.window_miss = 1;
    return -1;
  }
  return s.steps;
}

// One row's update on the entry adamw_step / sgd_step would select (the reference: the list's
// last entry). The rows were checked once when the step was built, so no per-row validation.
template <bool kReference, class Entry, class Problem>
void run_entry(std::span<const Entry> list, const Problem& q) {
  if constexpr (kReference)
    list.back().run(q);
  else
    ops::select_kernel(list, q).run(q);
}

template <bool kReference>
void run_multi(const ops::MultiTensorProblem& p) {
  StepScalars& s = *p.scalars;
  switch (p.op) {
    case ops::MultiTensorOp::accumulate: {
      for (const ops::MultiTensorRow& r : p.rows) {
        if (r.source == nullptr || r.n == 0) continue;
        if constexpr (kReference) {
          for (std::int64_t i = 0; i < r.n; ++i) {
            const float x = load_element(r.source, r.source_dtype, i);
            r.acc[i] = p.first ? x : r.acc[i] + x;
          }
        } else if (p.first) {
          convert(flat(r.source, r.source_dtype, r.n), flat(r.acc, DType::f32, r.n));
        } else {
          add_accumulate(flat(r.source, r.source_dtype, r.n), flat(r.acc, DType::f32, r.n));
        }
      }
      if (p.loss != nullptr) s.loss_sum = p.first ? double{*p.loss} : s.loss_sum + double{*p.loss};
      return;
    }
    case ops::MultiTensorOp::decide: {
      const ops::ViewsProblem views{p.grads};
      const double norm = kReference ? global_grad_norm_reference(views) : global_grad_norm(p.grads);
      const bool finite = kReference ? all_finite_reference(views) : all_finite(p.grads);
      ops::decide_step(s, p.rule, norm, finite);
      return;
    }
    case ops::MultiTensorOp::adamw: {
      if (s.skip != 0) return;
      const std::int64_t step = windowed_step(p);
      if (step < 0) return;
      for (const ops::MultiTensorRow& r : p.rows) {
        if (r.n == 0) continue;
        ops::AdamWProblem q;
        q.n = r.n;
        q.param = r.param;
        q.grad = r.grad;
        q.grad_dtype = r.grad_dtype;
        q.m = r.m;
        q.v = r.v;
        q.param_copy = r.param_copy;
        q.param_copy_dtype = r.copy_dtype;
        q.lr = p.adamw.lr;
        q.beta1 = p.adamw.beta1;
        q.beta2 = p.adamw.beta2;
        q.eps = p.adamw.eps;
        q.weight_decay = r.decay ? p.adamw.weight_decay : 0.0f;
        q.grad_scale = s.grad_scale;
        q.step = step;
        run_entry<kReference>(adamw_kernels(), q);
      }
      return;
    }
    case ops::MultiTensorOp::sgd: {
      if (s.skip != 0) return;
      for (const ops::MultiTensorRow& r : p.rows) {
        if (r.n == 0) continue;
        ops::SgdProblem q;
        q.n = r.n;
        q.param = r.param;
        q.grad = r.grad;
        q.grad_dtype = r.grad_dtype;
        q.momentum_buffer = r.m;
        q.param_copy = r.param_copy;
        q.param_copy_dtype = r.copy_dtype;
        q.lr = p.sgd.lr;
        q.momentum = p.sgd.momentum;
        q.weight_decay = r.decay ? p.sgd.weight_decay : 0.0f;
        q.grad_scale = s.grad_scale;
        run_entry<kReference>(sgd_kernels(), q);
      }
      return;
    }
  }
}

}  // namespace

std::span<const ops::MultiTensorEntry> multi_tensor_step_kernels() {
  static const ops::MultiTensorEntry kernels[] = {
      {"multi_tensor_step_cpu", {Device::cpu, Isa::ref, false}, nullptr, run_multi<false>},
      {"multi_tensor_step_reference", {Device::cpu, Isa::ref, false}, nullptr, run_multi<true>},
  };
  return kernels;
}

}  // namespace ampkit::cpu
