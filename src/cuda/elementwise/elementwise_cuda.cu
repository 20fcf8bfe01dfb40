// add, add_accumulate, add_row_vector and scale on CUDA (CUDA layer): out = a + b or
// out = alpha * a in fp32, one rounding per output, as the CPU kernel (elementwise_cpu.cpp). One
// thread an element over a grid-stride loop; a row stride of 0 broadcasts b's one row. Entry of
// elementwise_cuda_kernel_list.cpp.
#include <cstdint>

#include "cuda/common/element_cuda.cuh"
#include "cuda/common/grid_cuda.cuh"
#include "cuda/elementwise/elementwise_cuda.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"

namespace ampkit::cuda {
namespace {

__global__ void elementwise_kernel(ops::ElementwiseProblem p) {
  const std::int64_t total = p.rows * p.n;
  const bool add = p.b.data != nullptr;
  for (std::int64_t e = flat_index(); e < total; e += flat_stride()) {
    const std::int64_t r = e / p.n, c = e - r * p.n;
    const float a = load_as_float(p.a.data, p.a.dtype, r * p.a.row_stride + c);
    const float v = add ? a + load_as_float(p.b.data, p.b.dtype, r * p.b.row_stride + c) : p.alpha * a;
    store_from_float(p.out, p.out_dtype, r * p.out_row_stride + c, v);
  }
}

}  // namespace

void elementwise_cuda(const ops::ElementwiseProblem& p) {
  const char* fn = "elementwise";
  if (p.rows == 0 || p.n == 0) return;
  CudaContext& ctx = context(p.device_index, fn);
  elementwise_kernel<<<flat_blocks(p.rows * p.n), kFlatThreads, 0, ctx.stream>>>(p);
  check_launch(fn, "the elementwise kernel");
}

}  // namespace ampkit::cuda
