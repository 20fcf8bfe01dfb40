// The CUDA embedding kernel lists (CUDA layer): one entry each, taking every dtype mix and
// shape. Read by the embedding front end (src/ops/embedding) and the tests.
#include "cuda/common/cuda_reference.hpp"
#include "cuda/embedding/embedding_cuda.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "ops/backend.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

// The reference entries (cuda_reference.hpp): the CPU reference on host copies.
void embedding_fwd_ref_cuda(const ops::EmbeddingForwardProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().embedding_forward);
}
void embedding_bwd_ref_cuda(const ops::EmbeddingBackwardProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().embedding_backward);
}

constexpr ops::EmbeddingForwardEntry kForward[] = {{"embedding_fwd_cuda", kCuda, nullptr, embedding_forward_cuda},
                                                   {"embedding_fwd_ref_cuda", kCuda, nullptr, embedding_fwd_ref_cuda}};
constexpr ops::EmbeddingBackwardEntry kBackward[] = {
    {"embedding_bwd_cuda", kCuda, nullptr, embedding_backward_cuda},
    {"embedding_bwd_ref_cuda", kCuda, nullptr, embedding_bwd_ref_cuda}};

}  // namespace

std::span<const ops::EmbeddingForwardEntry> embedding_forward_cuda_kernels() { return kForward; }
std::span<const ops::EmbeddingBackwardEntry> embedding_backward_cuda_kernels() { return kBackward; }

}  // namespace ampkit::cuda
