// The CUDA GELU kernel list (CUDA layer): one entry taking every dtype mix, variant and shape, then the reference.
// Read by the activation front end (src/ops/activation) and the tests.
#include "cuda/activation/gelu_cuda.hpp"
#include "cuda/common/cuda_reference.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "ops/backend.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

// The reference entries (cuda_reference.hpp): the CPU reference on host copies.
void gelu_ref_cuda(const ops::GeluProblem& p) { run_reference_on_host(p, ops::backend(Device::cpu).kernels().gelu); }

constexpr ops::GeluEntry kGelu[] = {{"gelu_cuda", kCuda, nullptr, gelu_cuda},
                                    {"gelu_ref_cuda", kCuda, nullptr, gelu_ref_cuda}};

}  // namespace

std::span<const ops::GeluEntry> gelu_cuda_kernels() { return kGelu; }

}  // namespace ampkit::cuda
