// Softmax cross-entropy on CUDA (CUDA layer), fp32 math as the CPU kernel. Forward: one block a
// row: the row max, then sum exp(x - max) with each thread summing a fixed stride of classes and
// the block adding the thread sums in a fixed tree, lse = max + log(sum); then one block adds
// lse[r] - x[r, target] over the rows in double, each thread a fixed stride of rows and thread 0
// the thread sums in order, and the mean is rounded once. Backward: one thread an element,
// dlogits = dloss / rows * (exp(x - lse) - [j == target]). No atomics: the bits depend on the
// data only. Entries of softmax_cross_entropy_cuda_kernel_list.cpp.
#include <cstdint>

#include "cuda/common/element_cuda.cuh"
#include "cuda/common/grid_cuda.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"
#include "cuda/softmax_cross_entropy/softmax_cross_entropy_cuda.hpp"

namespace ampkit::cuda {
namespace {

constexpr int kThreads = 256;  // a power of two: the tree below halves it

// v of every thread combined in a fixed tree (max or sum); every thread gets the result.
template <bool kMax>
__device__ float block_reduce(float v, float* shared) {
  __syncthreads();  // the previous use of `shared` is done
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      shared[threadIdx.x] = kMax ? fmaxf(shared[threadIdx.x], shared[threadIdx.x + half])
                                 : shared[threadIdx.x] + shared[threadIdx.x + half];
    __syncthreads();
  }
  return shared[0];
}

__global__ void __launch_bounds__(kThreads) lse_kernel(ops::SoftmaxCrossEntropyProblem p) {
  __shared__ float shared[kThreads];
  for (std::int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const std::int64_t base = r * p.logits_row_stride;
    float m = -INFINITY;
    for (std::int64_t j = threadIdx.x; j < p.classes; j += kThreads)
      m = fmaxf(m, load_as_float(p.logits, p.logits_dtype, base + j));
    m = block_reduce<true>(m, shared);
    float s = 0.0f;
    for (std::int64_t j = threadIdx.x; j < p.classes; j += kThreads)
      s += expf(load_as_float(p.logits, p.logits_dtype, base + j) - m);
    s = block_reduce<false>(s, shared);
    if (threadIdx.x == 0) p.lse[r] = m + logf(s);
  }
}

__global__ void __launch_bounds__(kThreads) mean_loss_kernel(ops::SoftmaxCrossEntropyProblem p) {
  __shared__ double sums[kThreads];
  double s = 0.0;
  for (std::int64_t r = threadIdx.x; r < p.rows; r += kThreads) {
    const float target = load_as_float(p.logits, p.logits_dtype, r * p.logits_row_stride + p.targets[r]);
    s += static_cast<double>(p.lse[r]) - static_cast<double>(target);
  }
  sums[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    for (int t = 0; t < kThreads; ++t) total += sums[t];
    *p.loss = static_cast<float>(total / static_cast<double>(p.rows));
  }
}

__global__ void dlogits_kernel(ops::SoftmaxCrossEntropyProblem p, float scale) {
  const std::int64_t total = p.rows * p.classes;
  for (std::int64_t e = flat_index(); e < total; e += flat_stride()) {
    const std::int64_t r = e / p.classes, j = e - r * p.classes;
    const float prob = expf(load_as_float(p.logits, p.logits_dtype, r * p.logits_row_stride + j) - p.lse[r]);
    store_from_float(p.dlogits, p.dlogits_dtype, r * p.dlogits_row_stride + j,
                     scale * (j == p.targets[r] ? prob - 1.0f : prob));
  }
}

}  // namespace

void softmax_cross_entropy_forward_cuda(const ops::SoftmaxCrossEntropyProblem& p) {
  const char* fn = "softmax_cross_entropy_forward";
  CudaContext& ctx = context(p.device_index, fn);
  lse_kernel<<<row_blocks(p.rows), kThreads, 0, ctx.stream>>>(p);
  check_launch(fn, "the log-sum-exp kernel");
  mean_loss_kernel<<<1, kThreads, 0, ctx.stream>>>(p);
  check_launch(fn, "the mean-loss kernel");
}

void softmax_cross_entropy_backward_cuda(const ops::SoftmaxCrossEntropyProblem& p) {
  const char* fn = "softmax_cross_entropy_backward";
  CudaContext& ctx = context(p.device_index, fn);
  const auto scale = static_cast<float>(static_cast<double>(p.dloss) / static_cast<double>(p.rows));
  dlogits_kernel<<<flat_blocks(p.rows * p.classes), kFlatThreads, 0, ctx.stream>>>(p, scale);
  check_launch(fn, "the gradient kernel");
}

}  // namespace ampkit::cuda
