// Bulk conversion on CUDA (CUDA layer): every pair of f32 / bf16 / f16, widened exactly to fp32
// and rounded once to nearest even (NaN stays NaN, f16 overflow goes to Inf), as the CPU
// kernels; equal dtypes are a device copy. One thread an element over a grid-stride loop, on
// cuda:p.device_index (the problem carries the GPU).
#include <cstdint>

#include "ampkit/core/error.hpp"
#include "cuda/common/element_cuda.cuh"
#include "cuda/common/grid_cuda.cuh"
#include "cuda/convert/convert_cuda.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"

namespace ampkit::cuda {
namespace {

__global__ void convert_kernel(const void* src, DType from, void* dst, DType to, std::int64_t n) {
  for (std::int64_t i = flat_index(); i < n; i += flat_stride())
    store_from_float(dst, to, i, load_as_float(src, from, i));
}

}  // namespace

void convert_cuda(const ops::ConvertProblem& p) {
  const char* fn = "convert";
  if (p.n == 0 || p.src == p.dst) return;
  CudaContext& ctx = context(p.device_index, fn);
  if (p.from == p.to) {
    check_cuda(cudaMemcpyAsync(p.dst, p.src, static_cast<std::size_t>(p.n) * dtype_size(p.to), cudaMemcpyDeviceToDevice,
                               ctx.stream),
               fn, "cudaMemcpyAsync");
    return;
  }
  convert_kernel<<<flat_blocks(p.n), kFlatThreads, 0, ctx.stream>>>(p.src, p.from, p.dst, p.to, p.n);
  check_launch(fn, "the conversion kernel");
}

}  // namespace ampkit::cuda
