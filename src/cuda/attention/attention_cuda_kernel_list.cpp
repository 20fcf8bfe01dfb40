// The CUDA attention kernel lists (CUDA layer): one entry each, taking every dtype mix, layout
// and shape. Read by the attention front end (src/ops/attention) and the tests.
#include "cuda/attention/attention_cuda.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};
constexpr ops::AttentionForwardEntry kForward[] = {{"attention_fwd_cuda", kCuda, nullptr, attention_forward_cuda}};
constexpr ops::AttentionBackwardEntry kBackward[] = {{"attention_bwd_cuda", kCuda, nullptr, attention_backward_cuda}};

}  // namespace

std::span<const ops::AttentionForwardEntry> attention_forward_cuda_kernels() { return kForward; }
std::span<const ops::AttentionBackwardEntry> attention_backward_cuda_kernels() { return kBackward; }

}  // namespace ampkit::cuda
