// The CUDA softmax cross-entropy kernel lists (CUDA layer): one entry each, taking every dtype
// and shape, then the reference. Read by the front end (src/ops/softmax_cross_entropy) and the tests.
#include "cuda/common/cuda_reference.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "cuda/softmax_cross_entropy/softmax_cross_entropy_cuda.hpp"
#include "ops/backend.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

// The reference entries (cuda_reference.hpp): the CPU reference on host copies.
void softmax_cross_entropy_fwd_ref_cuda(const ops::SoftmaxCrossEntropyProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().softmax_cross_entropy_forward);
}
void softmax_cross_entropy_bwd_ref_cuda(const ops::SoftmaxCrossEntropyProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().softmax_cross_entropy_backward);
}

constexpr ops::SoftmaxCrossEntropyEntry kForward[] = {
    {"softmax_cross_entropy_fwd_cuda", kCuda, nullptr, softmax_cross_entropy_forward_cuda},
    {"softmax_cross_entropy_fwd_ref_cuda", kCuda, nullptr, softmax_cross_entropy_fwd_ref_cuda}};
constexpr ops::SoftmaxCrossEntropyEntry kBackward[] = {
    {"softmax_cross_entropy_bwd_cuda", kCuda, nullptr, softmax_cross_entropy_backward_cuda},
    {"softmax_cross_entropy_bwd_ref_cuda", kCuda, nullptr, softmax_cross_entropy_bwd_ref_cuda}};

}  // namespace

std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_forward_cuda_kernels() { return kForward; }
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_backward_cuda_kernels() { return kBackward; }

}  // namespace ampkit::cuda
