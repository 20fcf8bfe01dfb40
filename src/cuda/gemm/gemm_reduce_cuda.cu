// The GEMM's bias-gradient reductions (CUDA layer), launched by gemm_cuda.cpp: the fp32 partial
// sums of an operand per block of kBiasGradBlock k values (BGRADA / BGRADB, the operand as
// given), and the final sum of the partials in block order, rounded once. No atomics: every
// output bit is fixed by the data and the block size.
#include <cstdint>

#include "cuda/common/element_cuda.cuh"
#include "cuda/gemm/gemm_cuda_kernels.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace ampkit::cuda {
namespace {

constexpr int kThreads = 256;

// Thread: element r of the summed vector, k block blockIdx.x.
__global__ void operand_sum_kernel(const void* base, DType t, std::int64_t length, std::int64_t k,
                                   std::int64_t r_stride, std::int64_t k_stride, float* partials) {
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.x) * kBiasGradBlock;
  const std::int64_t k1 = k0 + kBiasGradBlock < k ? k0 + kBiasGradBlock : k;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.y) * kThreads + threadIdx.x; r < length;
       r += static_cast<std::int64_t>(gridDim.y) * kThreads) {
    float sum = 0.0f;
    for (std::int64_t kk = k0; kk < k1; ++kk) sum += load_as_float(base, t, r * r_stride + kk * k_stride);
    partials[blockIdx.x * length + r] = sum;
  }
}

// The same partials when the k values of one r are contiguous (k_stride 1): one warp per
// (r, block), lane l adding elements l and l + 32 of the block, then a butterfly over the lanes.
// A fixed order (the data's layout decides it, not the launch); the reads are coalesced.
__global__ void operand_sum_contiguous_kernel(const void* base, DType t, std::int64_t length, std::int64_t k,
                                              std::int64_t r_stride, float* partials) {
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.x) * kBiasGradBlock;
  const int lane = threadIdx.x % 32, warps = kThreads / 32;
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.y) * warps + threadIdx.x / 32; r < length;
       r += static_cast<std::int64_t>(gridDim.y) * warps) {
    const std::int64_t a = k0 + lane, b = k0 + 32 + lane;
    float sum = a < k ? load_as_float(base, t, r * r_stride + a) : 0.0f;
    sum += b < k ? load_as_float(base, t, r * r_stride + b) : 0.0f;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    if (lane == 0) partials[blockIdx.x * length + r] = sum;
  }
}

// Thread: element r; the partials in block order, in double, one rounding at the end.
__global__ void reduce_kernel(const float* partials, std::int64_t blocks, std::int64_t length, void* out, DType t,
                              bool accumulate) {
  for (std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; r < length;
       r += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    double sum = accumulate ? static_cast<double>(load_as_float(out, t, r)) : 0.0;
    for (std::int64_t b = 0; b < blocks; ++b) sum += static_cast<double>(partials[b * length + r]);
    store_from_float(out, t, r, static_cast<float>(sum));
  }
}

unsigned grid_for(std::int64_t items, std::int64_t cap) {
  const std::int64_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

}  // namespace

void operand_sum_partials(const void* base, DType t, std::int64_t length, std::int64_t k, std::int64_t r_stride,
                          std::int64_t k_stride, float* partials, cudaStream_t stream) {
  if (length == 0 || k == 0) return;
  static_assert(kBiasGradBlock == 64, "the contiguous kernel's warp covers 64 k values");
  const unsigned k_blocks = static_cast<unsigned>((k + kBiasGradBlock - 1) / kBiasGradBlock);
  if (k_stride == 1 && length > 1) {
    const std::int64_t groups = (length + kThreads / 32 - 1) / (kThreads / 32);
    const dim3 grid(k_blocks, static_cast<unsigned>(groups < 65535 ? groups : 65535));
    operand_sum_contiguous_kernel<<<grid, kThreads, 0, stream>>>(base, t, length, k, r_stride, partials);
  } else {
    const dim3 grid(k_blocks, grid_for(length, 65535));
    operand_sum_kernel<<<grid, kThreads, 0, stream>>>(base, t, length, k, r_stride, k_stride, partials);
  }
  check_launch("gemm", "the operand sum kernel");
}

void reduce_partials(const float* partials, std::int64_t blocks, std::int64_t length, void* out, DType t,
                     bool accumulate, cudaStream_t stream) {
  if (length == 0) return;
  reduce_kernel<<<grid_for(length, 1 << 20), kThreads, 0, stream>>>(partials, blocks, length, out, t, accumulate);
  check_launch("gemm", "the bias-gradient reduction kernel");
}

}  // namespace ampkit::cuda
