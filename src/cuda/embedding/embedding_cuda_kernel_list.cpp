// The CUDA embedding kernel lists (CUDA layer): one entry each, taking every dtype mix and
// shape. Read by the embedding front end (src/ops/embedding) and the tests.
#include "cuda/embedding/embedding_cuda.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};
constexpr ops::EmbeddingForwardEntry kForward[] = {{"embedding_fwd_cuda", kCuda, nullptr, embedding_forward_cuda}};
constexpr ops::EmbeddingBackwardEntry kBackward[] = {{"embedding_bwd_cuda", kCuda, nullptr, embedding_backward_cuda}};

}  // namespace

std::span<const ops::EmbeddingForwardEntry> embedding_forward_cuda_kernels() { return kForward; }
std::span<const ops::EmbeddingBackwardEntry> embedding_backward_cuda_kernels() { return kBackward; }

}  // namespace ampkit::cuda
