// The softmax cross-entropy kernel lists (kernels layer): best first, reference last. Read by
// src/ops/softmax_cross_entropy/softmax_cross_entropy_front_end.cpp and the tests.
#include "cpu/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit::cpu {

std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_forward_kernels() {
  static const ops::SoftmaxCrossEntropyEntry kernels[] = {
      {"softmax_cross_entropy_fwd_cpu", {Device::cpu, Isa::ref, false}, nullptr, softmax_cross_entropy_forward_cpu},
      {"softmax_cross_entropy_fwd_reference",
       {Device::cpu, Isa::ref, false},
       nullptr,
       softmax_cross_entropy_forward_reference},
  };
  return kernels;
}

std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_backward_kernels() {
  static const ops::SoftmaxCrossEntropyEntry kernels[] = {
      {"softmax_cross_entropy_bwd_cpu", {Device::cpu, Isa::ref, false}, nullptr, softmax_cross_entropy_backward_cpu},
      {"softmax_cross_entropy_bwd_reference",
       {Device::cpu, Isa::ref, false},
       nullptr,
       softmax_cross_entropy_backward_reference},
  };
  return kernels;
}

}  // namespace ampkit::cpu
