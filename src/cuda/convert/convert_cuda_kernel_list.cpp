// The CUDA conversion kernel list (CUDA layer): one entry taking every dtype pair, then the
// reference. Read by the convert front end (src/ops/convert) and the tests.
#include "cuda/common/cuda_reference.hpp"
#include "cuda/convert/convert_cuda.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "ops/backend.hpp"

namespace ampkit::cuda {
namespace {

constexpr ops::KernelNeeds kCuda{Device::cuda, Isa::ref, false};

// The reference entry (cuda_reference.hpp): the CPU reference on host copies.
void convert_ref_cuda(const ops::ConvertProblem& p) {
  run_reference_on_host(p, ops::backend(Device::cpu).kernels().convert);
}

constexpr ops::ConvertEntry kConvert[] = {{"convert_cuda", kCuda, nullptr, convert_cuda},
                                          {"convert_ref_cuda", kCuda, nullptr, convert_ref_cuda}};

}  // namespace

std::span<const ops::ConvertEntry> convert_cuda_kernels() { return kConvert; }

}  // namespace ampkit::cuda
