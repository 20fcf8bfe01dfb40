// The CUDA GELU kernel list (CUDA layer): one entry taking every dtype mix, variant and shape.
// Read by the activation front end (src/ops/activation) and the tests.
#include "cuda/activation/gelu_cuda.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};
constexpr ops::GeluEntry kGelu[] = {{"gelu_cuda", kCuda, nullptr, gelu_cuda}};

}  // namespace

std::span<const ops::GeluEntry> gelu_cuda_kernels() { return kGelu; }

}  // namespace ampkit::cuda
