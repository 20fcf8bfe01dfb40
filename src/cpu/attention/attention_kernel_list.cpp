// The causal attention kernel lists (kernels layer): best first, reference last. Declared in
// src/ops/attention/attention_problem.hpp; read by the front end and the tests.
#include "cpu/attention/attention_kernels.hpp"

namespace ampkit::ops {

std::span<const AttentionForwardEntry> attention_forward_kernels() {
  static const AttentionForwardEntry kernels[] = {
      {"attention_fwd_avx512", {Device::cpu, Isa::avx512, false}, nullptr, cpu::attention_forward_avx512},
      {"attention_fwd_avx2", {Device::cpu, Isa::avx2, false}, nullptr, cpu::attention_forward_avx2},
      {"attention_fwd_cpu", {Device::cpu, Isa::ref, false}, nullptr, cpu::attention_forward_cpu},
      {"attention_fwd_reference", {Device::cpu, Isa::ref, false}, nullptr, cpu::attention_forward_reference},
  };
  return kernels;
}

std::span<const AttentionBackwardEntry> attention_backward_kernels() {
  static const AttentionBackwardEntry kernels[] = {
      {"attention_bwd_avx512", {Device::cpu, Isa::avx512, false}, nullptr, cpu::attention_backward_avx512},
      {"attention_bwd_avx2", {Device::cpu, Isa::avx2, false}, nullptr, cpu::attention_backward_avx2},
      {"attention_bwd_cpu", {Device::cpu, Isa::ref, false}, nullptr, cpu::attention_backward_cpu},
      {"attention_bwd_reference", {Device::cpu, Isa::ref, false}, nullptr, cpu::attention_backward_reference},
  };
  return kernels;
}

}  // namespace ampkit::ops
