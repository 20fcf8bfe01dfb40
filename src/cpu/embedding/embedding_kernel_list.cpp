// The embedding kernel lists (kernels layer): best first, reference last. Read by
// src/ops/embedding/embedding_front_end.cpp and the tests.
#include "cpu/embedding/embedding_kernels.hpp"

namespace ampkit::cpu {

std::span<const ops::EmbeddingForwardEntry> embedding_forward_kernels() {
  static const ops::EmbeddingForwardEntry kernels[] = {
      {"embedding_fwd_cpu", {Device::cpu, Isa::ref, false}, nullptr, embedding_forward_cpu},
      {"embedding_fwd_reference", {Device::cpu, Isa::ref, false}, nullptr, embedding_forward_reference},
  };
  return kernels;
}

std::span<const ops::EmbeddingBackwardEntry> embedding_backward_kernels() {
  static const ops::EmbeddingBackwardEntry kernels[] = {
      {"embedding_bwd_sorted64_cpu", {Device::cpu, Isa::ref, false}, nullptr, embedding_backward_cpu},
      {"embedding_bwd_reference", {Device::cpu, Isa::ref, false}, nullptr, embedding_backward_reference},
  };
  return kernels;
}

}  // namespace ampkit::cpu
