// The CUDA elementwise kernel list (CUDA layer): one entry taking every dtype mix and shape.
// Read by the elementwise front end (src/ops/elementwise) and the tests.
#include "cuda/elementwise/elementwise_cuda.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};
constexpr ops::ElementwiseEntry kElementwise[] = {{"elementwise_cuda", kCuda, nullptr, elementwise_cuda}};

}  // namespace

std::span<const ops::ElementwiseEntry> elementwise_cuda_kernels() { return kElementwise; }

}  // namespace ampkit::cuda
