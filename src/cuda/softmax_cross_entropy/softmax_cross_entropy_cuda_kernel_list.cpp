// The CUDA softmax cross-entropy kernel lists (CUDA layer): one entry each, taking every dtype
// and shape. Read by the front end (src/ops/softmax_cross_entropy) and the tests.
#include "cuda/softmax_cross_entropy/softmax_cross_entropy_cuda.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};
constexpr ops::SoftmaxCrossEntropyEntry kForward[] = {
    {"softmax_cross_entropy_fwd_cuda", kCuda, nullptr, softmax_cross_entropy_forward_cuda}};
constexpr ops::SoftmaxCrossEntropyEntry kBackward[] = {
    {"softmax_cross_entropy_bwd_cuda", kCuda, nullptr, softmax_cross_entropy_backward_cuda}};

}  // namespace

std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_forward_cuda_kernels() { return kForward; }
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_backward_cuda_kernels() { return kBackward; }

}  // namespace ampkit::cuda
