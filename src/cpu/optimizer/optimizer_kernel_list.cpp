// The optimizer kernel lists (kernels layer): best first, reference last. Read by
// src/ops/optimizer/optimizer_front_end.cpp and the tests.
#include "cpu/optimizer/optimizer_kernels.hpp"

namespace ampkit::cpu {

std::span<const ops::AdamWEntry> adamw_kernels() {
  static const ops::AdamWEntry kernels[] = {
      {"adamw_fused_cpu", {Device::cpu, Isa::ref, false}, nullptr, adamw_cpu},
      {"adamw_reference", {Device::cpu, Isa::ref, false}, nullptr, adamw_reference},
  };
  return kernels;
}

std::span<const ops::SgdEntry> sgd_kernels() {
  static const ops::SgdEntry kernels[] = {
      {"sgd_fused_cpu", {Device::cpu, Isa::ref, false}, nullptr, sgd_cpu},
      {"sgd_reference", {Device::cpu, Isa::ref, false}, nullptr, sgd_reference},
  };
  return kernels;
}

std::span<const ops::GradNormEntry> global_grad_norm_kernels() {
  static const ops::GradNormEntry kernels[] = {
      {"global_grad_norm_blocked4096_cpu", {Device::cpu, Isa::ref, false}, nullptr, global_grad_norm_cpu},
      {"global_grad_norm_reference", {Device::cpu, Isa::ref, false}, nullptr, global_grad_norm_reference},
  };
  return kernels;
}

std::span<const ops::AllFiniteEntry> all_finite_kernels() {
  static const ops::AllFiniteEntry kernels[] = {
      {"all_finite_cpu", {Device::cpu, Isa::ref, false}, nullptr, all_finite_cpu},
      {"all_finite_reference", {Device::cpu, Isa::ref, false}, nullptr, all_finite_reference},
  };
  return kernels;
}

}  // namespace ampkit::cpu
