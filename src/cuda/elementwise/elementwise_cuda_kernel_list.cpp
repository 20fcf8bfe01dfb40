// The CUDA elementwise kernel list (CUDA layer): one entry taking every dtype mix and shape.
// Read by the elementwise front end (src/ops/elementwise) and the tests.
#include "cuda/common/cuda_reference.hpp"
#include "cuda/elementwise/elementwise_cuda.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "ops/backend.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

// The reference entries (cuda_reference.hpp): the CPU reference on host copies.
void elementwise_ref_cuda(const ops::ElementwiseProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().elementwise);
}

constexpr ops::ElementwiseEntry kElementwise[] = {{"elementwise_cuda", kCuda, nullptr, elementwise_cuda},
                                                  {"elementwise_ref_cuda", kCuda, nullptr, elementwise_ref_cuda}};

}  // namespace

std::span<const ops::ElementwiseEntry> elementwise_cuda_kernels() { return kElementwise; }

}  // namespace ampkit::cuda
