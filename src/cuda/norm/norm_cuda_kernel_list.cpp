// The CUDA LayerNorm/RMSNorm kernel lists (CUDA layer): one entry each, taking every dtype mix
// and shape (so no list has a hole), then the reference. Read by the norm front end (src/ops/norm) and the tests.
#include "cuda/common/cuda_reference.hpp"
#include "cuda/norm/norm_cuda.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "ops/backend.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

// The reference entries (cuda_reference.hpp): the CPU reference on host copies.
void layer_norm_fwd_ref_cuda(const ops::NormForwardProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().layer_norm_forward);
}
void layer_norm_bwd_ref_cuda(const ops::NormBackwardProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().layer_norm_backward);
}
void rms_norm_fwd_ref_cuda(const ops::NormForwardProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().rms_norm_forward);
}
void rms_norm_bwd_ref_cuda(const ops::NormBackwardProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().rms_norm_backward);
}

constexpr ops::NormForwardEntry kLayerFwd[] = {{"layer_norm_fwd_cuda", kCuda, nullptr, layer_norm_fwd_cuda},
                                               {"layer_norm_fwd_ref_cuda", kCuda, nullptr, layer_norm_fwd_ref_cuda}};
constexpr ops::NormBackwardEntry kLayerBwd[] = {{"layer_norm_bwd_cuda", kCuda, nullptr, layer_norm_bwd_cuda},
                                                {"layer_norm_bwd_ref_cuda", kCuda, nullptr, layer_norm_bwd_ref_cuda}};
constexpr ops::NormForwardEntry kRmsFwd[] = {{"rms_norm_fwd_cuda", kCuda, nullptr, rms_norm_fwd_cuda},
                                             {"rms_norm_fwd_ref_cuda", kCuda, nullptr, rms_norm_fwd_ref_cuda}};
constexpr ops::NormBackwardEntry kRmsBwd[] = {{"rms_norm_bwd_cuda", kCuda, nullptr, rms_norm_bwd_cuda},
                                              {"rms_norm_bwd_ref_cuda", kCuda, nullptr, rms_norm_bwd_ref_cuda}};

}  // namespace

std::span<const ops::NormForwardEntry> layer_norm_fwd_cuda_kernels() { return kLayerFwd; }
std::span<const ops::NormBackwardEntry> layer_norm_bwd_cuda_kernels() { return kLayerBwd; }
std::span<const ops::NormForwardEntry> rms_norm_fwd_cuda_kernels() { return kRmsFwd; }
std::span<const ops::NormBackwardEntry> rms_norm_bwd_cuda_kernels() { return kRmsBwd; }

}  // namespace ampkit::cuda
