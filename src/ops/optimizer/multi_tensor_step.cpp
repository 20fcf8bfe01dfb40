// Front end of MultiTensorStep (ops layer): checks every parameter once at construction, builds
// the step's table (rows, the row of every 4096-element chunk, one double partial per chunk, the
// StepScalars) in the memory of the parameters' device through its ops::Backend, and runs each
// stage with the first entry of the device's multi_tensor_step list that takes it. A stage call
// allocates nothing and waits for nothing (on a GPU it only enqueues).
#include <cmath>
#include <cstdio>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "ops/backend.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/operand_checks.hpp"
#include "ops/optimizer/optimizer_kernels.hpp"
#include "ops/optimizer/step_decision.hpp"

namespace ampkit {
namespace {

constexpr const char* kFn = "MultiTensorStep";

struct BackendFree {
  const ops::Backend* backend = nullptr;
  void operator()(void* p) const noexcept { backend->deallocate(p); }
};
using Buffer = std::unique_ptr<void, BackendFree>;

// One optional f32 view of param's shape on the step's device.
void check_state(const char* name, const TensorView& param, const TensorView& v, Device device, int index) {
  if (!v.present) return;
  ops::check_float_view_on(kFn, name, v, device, index, "params[0].param", ops::Stage::call);
  ops::check_data(kFn, name, v, "elements", ops::Stage::call);
  ops::check_dtype_is(kFn, name, v, DType::f32, "f32");
  ops::check_same_shape(kFn, "param", param, name, v);
}

}  // namespace

struct MultiTensorStep::Impl {
  const ops::Backend* backend = nullptr;
  Device device = Device::cpu;
  int device_index = 0;
  StepRule rule;
  std::vector<ops::MultiTensorRow> rows;
  std::vector<TensorView> grads;  // the rows' grads
  std::int64_t chunks = 0;
  Buffer device_rows, chunk_rows, partials, scalars;

  Buffer allocate(std::size_t bytes) const {
    return Buffer(backend->allocate(bytes, device_index), BackendFree{backend});
  }

  ops::MultiTensorProblem problem(ops::MultiTensorOp op) const {
    ops::MultiTensorProblem p;
    p.device = device;
    p.device_index = device_index;
    p.op = op;
    p.rows = rows;
    p.grads = grads;
    p.device_rows = static_cast<const ops::MultiTensorRow*>(device_rows.get());
    p.chunk_rows = static_cast<const std::int32_t*>(chunk_rows.get());
    p.chunks = chunks;
    p.partials = static_cast<double*>(partials.get());
    p.scalars = static_cast<StepScalars*>(scalars.get());
    p.rule = rule;
    return p;
  }

  const ops::MultiTensorEntry& entry(const ops::MultiTensorProblem& p) const {
    const auto list = backend->kernels().multi_tensor_step;
    if (list.empty())
      fail_with(ErrorKind::unsupported, kFn, "the ", backend->name(), " backend has no multi-tensor step");
    return ops::select_kernel(list, p);
  }
  void run(const ops::MultiTensorProblem& p) const { entry(p).run(p); }
};

MultiTensorStep::MultiTensorStep(std::span<const MultiTensorParam> params, const StepRule& rule, Device device,
                                 int device_index, float initial_scale)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  if (device != Device::cpu && device != Device::cuda)
    fail(kFn, "device must be cpu or cuda, but got the value ", static_cast<int>(device));
  s.backend = &ops::backend(device);
  if (const char* why = s.backend->unavailable())
    fail_with(ErrorKind::unsupported, kFn, "device is ", device_name(device), ", but ", why);
  s.device = device;
  s.device_index = device == Device::cpu ? 0 : device_index;
  if (!(rule.clip_norm >= 0.0) || !std::isfinite(rule.clip_norm))
    fail(kFn, "rule.clip_norm must be finite and >= 0, but got ", rule.clip_norm);
  if (!(rule.divisor >= 1.0) || !std::isfinite(rule.divisor))
    fail(kFn, "rule.divisor must be finite and >= 1, but got ", rule.divisor);
  if (!(initial_scale > 0.0f) || !std::isfinite(initial_scale))
    fail(kFn, "initial_scale must be finite and > 0, but got ", initial_scale);
  s.rule = rule;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const MultiTensorParam& q = params[i];
    char name[64];
    auto at = [&](const char* field) {
      std::snprintf(name, sizeof name, "params[%zu].%s", i, field);
      return name;
    };
    ops::check_given(kFn, at("param"), q.param, "the f32 master weights");
    ops::check_float_view_on(kFn, at("param"), q.param, s.device, s.device_index, "params[0].param", ops::Stage::call);
    ops::check_data(kFn, at("param"), q.param, "elements", ops::Stage::call);
    ops::check_dtype_is(kFn, at("param"), q.param, DType::f32, "f32");
    ops::check_given(kFn, at("grad"), q.grad, "the gradient the update reads");
    ops::check_float_view_on(kFn, at("grad"), q.grad, s.device, s.device_index, "params[0].param", ops::Stage::call);
    ops::check_data(kFn, at("grad"), q.grad, "elements", ops::Stage::call);
    ops::check_same_shape(kFn, "param", q.param, at("grad"), q.grad);
    check_state(at("m"), q.param, q.m, s.device, s.device_index);
    check_state(at("v"), q.param, q.v, s.device, s.device_index);
    check_state(at("acc"), q.param, q.acc, s.device, s.device_index);
    if (q.param_copy.present) {
      ops::check_float_view_on(kFn, at("param_copy"), q.param_copy, s.device, s.device_index, "params[0].param",
                               ops::Stage::call);
      ops::check_data(kFn, at("param_copy"), q.param_copy, "elements", ops::Stage::call);
      ops::check_same_shape(kFn, "param", q.param, at("param_copy"), q.param_copy);
    }
    if (q.source.present != q.acc.present)
      fail(kFn, at("source"), " and acc must be given together (gradient accumulation), but ",
           q.source.present ? "acc is absent" : "source is absent");
    if (q.source.present) {
      ops::check_float_view_on(kFn, at("source"), q.source, s.device, s.device_index, "params[0].param",
                               ops::Stage::call);
      ops::check_data(kFn, at("source"), q.source, "elements", ops::Stage::call);
      ops::check_same_shape(kFn, "param", q.param, at("source"), q.source);
    }
    ops::MultiTensorRow r;
    r.param = static_cast<float*>(q.param.data);
    r.grad = q.grad.data;
    r.grad_dtype = q.grad.dtype;
    r.m = q.m.present ? static_cast<float*>(q.m.data) : nullptr;
    r.v = q.v.present ? static_cast<float*>(q.v.data) : nullptr;
    if (q.param_copy.present) {
      r.param_copy = q.param_copy.data;
      r.copy_dtype = q.param_copy.dtype;
    }
    if (q.source.present) {
      r.source = q.source.data;
      r.source_dtype = q.source.dtype;
      r.acc = static_cast<float*>(q.acc.data);
    }
    r.n = q.param.numel();
    r.first_chunk = s.chunks;
    r.decay = q.decay;
    s.chunks += (r.n + ops::kMultiChunk - 1) / ops::kMultiChunk;
    s.rows.push_back(r);
    s.grads.push_back(q.grad);
  }
  if (s.chunks > INT32_MAX) fail(kFn, "the parameters hold more than 2^31 chunks of 4096 elements");
  std::vector<std::int32_t> chunk_rows(static_cast<std::size_t>(s.chunks));
  for (std::size_t i = 0; i < s.rows.size(); ++i)
    for (std::int64_t c = 0; c * ops::kMultiChunk < s.rows[i].n; ++c)
      chunk_rows[static_cast<std::size_t>(s.rows[i].first_chunk + c)] = static_cast<std::int32_t>(i);
  const std::size_t row_bytes = s.rows.size() * sizeof(ops::MultiTensorRow);
  s.device_rows = s.allocate(row_bytes);
  if (row_bytes > 0) s.backend->copy_to_device(s.device_rows.get(), s.rows.data(), row_bytes, s.device_index);
  s.chunk_rows = s.allocate(chunk_rows.size() * sizeof(std::int32_t));
  if (!chunk_rows.empty())
    s.backend->copy_to_device(s.chunk_rows.get(), chunk_rows.data(), chunk_rows.size() * sizeof(std::int32_t),
                              s.device_index);
  s.partials = s.allocate(static_cast<std::size_t>(s.chunks) * sizeof(double));
  s.scalars = s.allocate(sizeof(StepScalars));
  StepScalars initial;
  initial.loss_scale = initial_scale;
  initial.seed = rule.loss_scaling ? initial_scale : 1.0f;
  initial.used_seed = initial.seed;
  write(initial);
}

void apply_loss_scale_rule(float& scale, std::int64_t& good_steps, std::int64_t& skipped_steps, const StepRule& rule,
                           bool finite) {
  ops::update_loss_scale(scale, good_steps, skipped_steps, rule, finite);
}

MultiTensorStep::MultiTensorStep(MultiTensorStep&&) noexcept = default;
MultiTensorStep& MultiTensorStep::operator=(MultiTensorStep&&) noexcept = default;
MultiTensorStep::~MultiTensorStep() = default;

void MultiTensorStep::accumulate(bool first, const float* loss) {
  ops::MultiTensorProblem p = impl_->problem(ops::MultiTensorOp::accumulate);
  p.first = first;
  p.loss = loss;
  impl_->run(p);
}

void MultiTensorStep::decide() { impl_->run(impl_->problem(ops::MultiTensorOp::decide)); }

void MultiTensorStep::decide(double raw_norm, bool finite) {
  if (impl_->device != Device::cpu)
    fail_with(ErrorKind::unsupported, "MultiTensorStep::decide",
              "a norm from the caller needs the step on the cpu, but "
              "it runs on ",
              device_name(impl_->device));
  ops::decide_step(*scalars(), impl_->rule, raw_norm, finite);
}

void MultiTensorStep::adamw(const MultiAdamWArgs& a) {
  const char* fn = "MultiTensorStep::adamw";
  auto non_negative = [&](const char* name, float x) {
    if (!(std::isfinite(x) && x >= 0.0f)) fail(fn, name, " must be finite and >= 0, but got ", x);
  };
  auto unit = [&](const char* name, float x) {
    if (!(x >= 0.0f && x < 1.0f)) fail(fn, name, " must be in [0, 1), but got ", x);
  };
  non_negative("lr", a.lr);
  unit("beta1", a.beta1);
  unit("beta2", a.beta2);
  non_negative("eps", a.eps);
  non_negative("weight_decay", a.weight_decay);
  if (a.step_base < 1) fail(fn, "step_base must be >= 1 (1-based, for bias correction), but got ", a.step_base);
  for (std::size_t i = 0; i < impl_->rows.size(); ++i)
    if (impl_->rows[i].n > 0 && (impl_->rows[i].m == nullptr || impl_->rows[i].v == nullptr))
      fail(fn, "params[", i, "] needs m and v (AdamW), but ", impl_->rows[i].m == nullptr ? "m" : "v", " is absent");
  ops::MultiTensorProblem p = impl_->problem(ops::MultiTensorOp::adamw);
  p.adamw = a;
  ops::AdamWScalars& k = p.adamw_scalars;
  k.b1 = a.beta1;
  k.b2 = a.beta2;
  k.c1 = static_cast<float>(1.0 - double{a.beta1});
  k.c2 = static_cast<float>(1.0 - double{a.beta2});
  k.eps = a.eps;
  k.lr_wd = static_cast<float>(double{a.lr} * double{a.weight_decay});
  k.step_base = a.step_base;
  for (int w = 0; w < kStepWindow; ++w) {
    const ops::AdamWStepScalars bc = ops::adamw_step_scalars(a.lr, a.beta1, a.beta2, a.step_base + w);
    k.step_size[w] = bc.step_size;
    k.rsqrt_bc2[w] = bc.rsqrt_bc2;
  }
  impl_->run(p);
}

void MultiTensorStep::sgd(const MultiSgdArgs& a) {
  const char* fn = "MultiTensorStep::sgd";
  if (!(std::isfinite(a.lr) && a.lr >= 0.0f)) fail(fn, "lr must be finite and >= 0, but got ", a.lr);
  if (!(a.momentum >= 0.0f && a.momentum < 1.0f)) fail(fn, "momentum must be in [0, 1), but got ", a.momentum);
  if (!(std::isfinite(a.weight_decay) && a.weight_decay >= 0.0f))
    fail(fn, "weight_decay must be finite and >= 0, but got ", a.weight_decay);
  if (a.momentum != 0.0f)
    for (std::size_t i = 0; i < impl_->rows.size(); ++i)
      if (impl_->rows[i].n > 0 && impl_->rows[i].m == nullptr)
        fail(fn, "params[", i, "] needs m (the momentum buffer: momentum is not 0), but it is absent");
  ops::MultiTensorProblem p = impl_->problem(ops::MultiTensorOp::sgd);
  p.sgd = a;
  impl_->run(p);
}

StepScalars* MultiTensorStep::scalars() const { return static_cast<StepScalars*>(impl_->scalars.get()); }

StepScalars MultiTensorStep::read() const {
  StepScalars s;
  impl_->backend->copy_to_host(&s, impl_->scalars.get(), sizeof s, impl_->device_index);
  return s;
}

void MultiTensorStep::write(const StepScalars& s) {
  impl_->backend->copy_to_device(impl_->scalars.get(), &s, sizeof s, impl_->device_index);
}

const char* MultiTensorStep::kernel_name() const {
  return impl_->entry(impl_->problem(ops::MultiTensorOp::decide)).name;
}

}  // namespace ampkit
