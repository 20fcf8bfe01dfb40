// The CUDA multi-tensor step list (CUDA layer): the device kernels, then the reference (the cpu
// reference entry on host copies of every row's tensors and the StepScalars). Read by the
// multi-tensor step's front end (src/ops/optimizer/multi_tensor_step.cpp) and the tests.
#include <vector>

#include "cuda/common/cuda_reference.hpp"
#include "cuda/optimizer/optimizer_cuda.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "ops/backend.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

std::size_t bytes_of(std::int64_t n, DType t) { return static_cast<std::size_t>(n) * dtype_size(t); }

void multi_tensor_step_ref_cuda(const ops::MultiTensorProblem& p) {
  HostStaging staging(p.device_index);
  for (const ops::MultiTensorRow& r : p.rows) {
    staging.add(r.param, bytes_of(r.n, DType::f32));
    staging.add(r.grad, bytes_of(r.n, r.grad_dtype));
    if (r.m != nullptr) staging.add(r.m, bytes_of(r.n, DType::f32));
    if (r.v != nullptr) staging.add(r.v, bytes_of(r.n, DType::f32));
    if (r.param_copy != nullptr) staging.add(r.param_copy, bytes_of(r.n, r.copy_dtype));
    if (r.source != nullptr) {
      staging.add(r.source, bytes_of(r.n, r.source_dtype));
      staging.add(r.acc, bytes_of(r.n, DType::f32));
    }
  }
  staging.add(p.scalars, sizeof(StepScalars));
  if (p.loss != nullptr) staging.add(p.loss, sizeof(float));
  staging.stage_in();
  auto host = [&](auto* ptr) { return static_cast<decltype(ptr)>(ptr != nullptr ? staging.host(ptr) : nullptr); };
  std::vector<ops::MultiTensorRow> rows(p.rows.begin(), p.rows.end());
  std::vector<TensorView> grads(p.grads.begin(), p.grads.end());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ops::MultiTensorRow& r = rows[i];
    r.param = host(r.param);
    r.grad = host(r.grad);
    r.m = host(r.m);
    r.v = host(r.v);
    r.param_copy = host(r.param_copy);
    r.source = host(r.source);
    r.acc = host(r.acc);
    grads[i].data = const_cast<void*>(r.grad);
    grads[i].device = Device::cpu;
    grads[i].device_index = 0;
  }
  ops::MultiTensorProblem q = p;
  q.device = Device::cpu;
  q.device_index = 0;
  q.rows = rows;
  q.grads = grads;
  q.device_rows = rows.data();
  q.scalars = host(p.scalars);
  q.loss = host(p.loss);
  ops::backend(Device::cpu).kernels().multi_tensor_step.back().run(q);
  staging.stage_out();
}

constexpr ops::MultiTensorEntry kMulti[] = {{"multi_tensor_step_cuda", kCuda, nullptr, multi_tensor_step_cuda},
                                            {"multi_tensor_step_ref_cuda", kCuda, nullptr, multi_tensor_step_ref_cuda}};

}  // namespace

std::span<const ops::MultiTensorEntry> multi_tensor_step_cuda_kernels() { return kMulti; }

}  // namespace ampkit::cuda
