// The CUDA attention kernel lists (CUDA layer): the flash kernels first (bf16 / f16 at head dims
// 32, 64, 128; they decline the rest with a reason), then the plain kernels taking every dtype
// mix, layout and shape, then the reference. Read by the attention front end (src/ops/attention) and the tests.
#include "cuda/attention/attention_cuda.hpp"
#include "cuda/common/cuda_reference.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "ops/backend.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

// The reference entries (cuda_reference.hpp): the CPU reference on host copies.
void attention_fwd_ref_cuda(const ops::AttentionForwardProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().attention_forward);
}
void attention_bwd_ref_cuda(const ops::AttentionBackwardProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().attention_backward);
}

constexpr ops::AttentionForwardEntry kForward[] = {
    {"attention_fwd_flash_cuda", kCuda, attention_forward_flash_declines, attention_forward_flash},
    {"attention_fwd_cuda", kCuda, nullptr, attention_forward_cuda},
    {"attention_fwd_ref_cuda", kCuda, nullptr, attention_fwd_ref_cuda}};
constexpr ops::AttentionBackwardEntry kBackward[] = {
    {"attention_bwd_flash_cuda", kCuda, attention_backward_flash_declines, attention_backward_flash},
    {"attention_bwd_cuda", kCuda, nullptr, attention_backward_cuda},
    {"attention_bwd_ref_cuda", kCuda, nullptr, attention_bwd_ref_cuda}};

}  // namespace

std::span<const ops::AttentionForwardEntry> attention_forward_cuda_kernels() { return kForward; }
std::span<const ops::AttentionBackwardEntry> attention_backward_cuda_kernels() { return kBackward; }

}  // namespace ampkit::cuda
