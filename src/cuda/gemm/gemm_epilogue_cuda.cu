// The GEMM epilogue and operand conversion kernels (CUDA layer), launched by gemm_cuda.cpp:
// x = P + beta C + bias (P: cuBLASLt's fp32 alpha op(A) op(B)), aux = x, D = act(x) rounded once,
// and the fp32 row sums of D's pre-rounding values per block of kBiasGradBlock columns. The
// scalar math follows src/cpu/gemm/gemm_reference.cpp; dtypes are runtime values, uniform per
// launch (one instantiation keeps the CUDA build short).
#include <cstdint>

#include "cuda/common/element_cuda.cuh"
#include "cuda/gemm/gemm_cuda_kernels.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace ampkit::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kBatch = 8;
constexpr float kSqrt2OverPi = 0.797884560802865f;
constexpr float kGeluCubic = 0.044715f;
constexpr float kInvSqrt2 = 0.707106781186547f;
constexpr float kInvSqrt2Pi = 0.398942280401433f;

// gelu(x): tanh form x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3); erf form
// 0.5 x erfc(-x / sqrt(2)).
__device__ float gelu(float x, GeluVariant v) {
  if (v == GeluVariant::tanh) {
    const float u2 = 2.0f * kSqrt2OverPi * x * (1.0f + kGeluCubic * x * x);
    return x / (1.0f + expf(-u2));
  }
  return 0.5f * x * erfcf(-x * kInvSqrt2);
}

// gelu'(x): tanh form 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 0.044715 x^2);
// erf form 0.5 erfc(-x / sqrt(2)) + x exp(-x^2 / 2) / sqrt(2 pi).
__device__ float gelu_derivative(float x, GeluVariant v) {
  if (v == GeluVariant::tanh) {
    const float t = tanhf(kSqrt2OverPi * x * (1.0f + kGeluCubic * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  }
  return 0.5f * erfcf(-x * kInvSqrt2) + x * expf(-0.5f * x * x) * kInvSqrt2Pi;
}

// Stores v rounded to t; an f16 result that is subnormal is counted and, under flush, zeroed.
__device__ void store_output(void* base, DType t, std::int64_t i, float v, bool flush, long long& subnormals) {
  if (t == DType::f16) {
    const float r = __half2float(__float2half_rn(v));
    if (r != 0.0f && fabsf(r) < 0x1p-14f) {
      ++subnormals;
      if (flush) v = copysignf(0.0f, r);
    }
  }
  store_from_float(base, t, i, v);
}

// Thread: row i of D over columns [jb * kBiasGradBlock, +kBiasGradBlock), in column order (the
// warp reads consecutive rows: coalesced). Grid: x = column blocks, y strides over row tiles.
__global__ void epilogue_kernel(EpilogueLaunch e) {
  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * kBiasGradBlock;
  const std::int64_t j1 = j0 + kBiasGradBlock < e.n ? j0 + kBiasGradBlock : e.n;
  long long subnormals = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.y) * kThreads + threadIdx.x; i < e.m;
       i += static_cast<std::int64_t>(gridDim.y) * kThreads) {
    const float bias = e.bias != nullptr ? load_as_float(e.bias, e.bias_dtype, i) : 0.0f;
    float row_sum = 0.0f;
    // kBatch columns at a time, every load of the batch issued before any use (memory-level
    // parallelism); the row sum still adds the columns in order.
    for (std::int64_t jb = j0; jb < j1; jb += kBatch) {
      const int count = static_cast<int>(j1 - jb < kBatch ? j1 - jb : kBatch);
      float x[kBatch], g[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) x[u] = u < count && e.product != nullptr ? e.product[i + (jb + u) * e.m] : 0.0f;
      if (e.c != nullptr) {
#pragma unroll
        for (int u = 0; u < kBatch; ++u)
          if (u < count) x[u] += e.beta * load_as_float(e.c, e.c_dtype, i + (jb + u) * e.ldc);
      }
      if (e.aux_in) {
#pragma unroll
        for (int u = 0; u < kBatch; ++u)
          g[u] = u < count ? load_as_float(e.aux, e.aux_dtype, i + (jb + u) * e.aux_ld) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        if (u >= count) break;
        const std::int64_t j = jb + u;
        float v = x[u] + bias;
        if (e.aux_out) store_output(e.aux, e.aux_dtype, i + j * e.aux_ld, v, e.flush, subnormals);
        switch (e.activation) {
          case cpu::GemmActivation::none: break;
          case cpu::GemmActivation::relu: v = v < 0.0f ? 0.0f : v; break;
          case cpu::GemmActivation::gelu: v = gelu(v, e.gelu); break;
          case cpu::GemmActivation::drelu: v = g[u] > 0.0f ? v : 0.0f; break;
          case cpu::GemmActivation::dgelu: v *= gelu_derivative(g[u], e.gelu); break;
        }
        row_sum += v;
        store_output(e.d, e.d_dtype, i + j * e.ldd, v, e.flush, subnormals);
      }
    }
    if (e.bias_partials != nullptr) e.bias_partials[blockIdx.x * e.m + i] = row_sum;
  }
  // Integer counts: the order of the additions cannot change them.
  if (e.subnormal_outputs != nullptr && subnormals != 0)
    atomicAdd(reinterpret_cast<unsigned long long*>(e.subnormal_outputs), static_cast<unsigned long long>(subnormals));
}

// Thread: one element of the packed destination (column-major walk of the source).
__global__ void convert_kernel(const void* src, DType from, std::int64_t rows, std::int64_t total, std::int64_t ld,
                               void* dst, DType to, bool flush, bool alt, long long* subnormal_count) {
  long long subnormals = 0;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const std::int64_t r = idx % rows, c = idx / rows;
    float v = load_as_float(src, from, r + c * ld);
    if (from == DType::f16) {
      if (is_f16_subnormal(v)) {
        ++subnormals;
        if (flush) v = copysignf(0.0f, v);
      }
      if (alt) v = round_to_bf16(v);
    }
    if (dst != nullptr) store_from_float(dst, to, idx, v);
  }
  if (subnormal_count != nullptr && subnormals != 0)
    atomicAdd(reinterpret_cast<unsigned long long*>(subnormal_count), static_cast<unsigned long long>(subnormals));
}

unsigned grid_for(std::int64_t items, std::int64_t cap) {
  const std::int64_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

}  // namespace

void convert_matrix(const void* src, DType from, std::int64_t rows, std::int64_t cols, std::int64_t ld, void* dst,
                    DType to, bool flush, bool alt, long long* subnormals, cudaStream_t stream) {
  const std::int64_t total = rows * cols;
  if (total == 0) return;
  convert_kernel<<<grid_for(total, 1 << 20), kThreads, 0, stream>>>(src, from, rows, total, ld, dst, to, flush, alt,
                                                                    subnormals);
  check_launch("gemm", "the operand conversion kernel");
}

void gemm_epilogue(const EpilogueLaunch& e, cudaStream_t stream) {
  if (e.m == 0 || e.n == 0) return;
  const dim3 grid(static_cast<unsigned>((e.n + kBiasGradBlock - 1) / kBiasGradBlock), grid_for(e.m, 65535));
  epilogue_kernel<<<grid, kThreads, 0, stream>>>(e);
  check_launch("gemm", "the epilogue kernel");
}

}  // namespace ampkit::cuda
