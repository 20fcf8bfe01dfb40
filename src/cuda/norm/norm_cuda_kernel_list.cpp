// The CUDA LayerNorm/RMSNorm kernel lists (CUDA layer): one entry each, taking every dtype mix
// and shape (so no list has a hole). Read by the norm front end (src/ops/norm) and the tests.
#include "cuda/norm/norm_cuda.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

constexpr ops::NormForwardEntry kLayerFwd[] = {{"layer_norm_fwd_cuda", kCuda, nullptr, layer_norm_fwd_cuda}};
constexpr ops::NormBackwardEntry kLayerBwd[] = {{"layer_norm_bwd_cuda", kCuda, nullptr, layer_norm_bwd_cuda}};
constexpr ops::NormForwardEntry kRmsFwd[] = {{"rms_norm_fwd_cuda", kCuda, nullptr, rms_norm_fwd_cuda}};
constexpr ops::NormBackwardEntry kRmsBwd[] = {{"rms_norm_bwd_cuda", kCuda, nullptr, rms_norm_bwd_cuda}};

}  // namespace

std::span<const ops::NormForwardEntry> layer_norm_fwd_cuda_kernels() { return kLayerFwd; }
std::span<const ops::NormBackwardEntry> layer_norm_bwd_cuda_kernels() { return kLayerBwd; }
std::span<const ops::NormForwardEntry> rms_norm_fwd_cuda_kernels() { return kRmsFwd; }
std::span<const ops::NormBackwardEntry> rms_norm_bwd_cuda_kernels() { return kRmsBwd; }

}  // namespace ampkit::cuda
