// Row helpers of the CUDA LayerNorm/RMSNorm kernels (CUDA layer, internal): vector loads and
// stores of V consecutive elements widened to fp32, and a block-wide sum whose order depends on
// the block size only (warp butterfly, then the warps in order), so every thread gets the same
// bits. Included by norm_fwd_cuda.cu and norm_bwd_cuda.cu.
#pragma once

#include <cstdint>

#include "cuda/common/element_cuda.cuh"

namespace ampkit::cuda::norm {

/// Register-cached chunks of V elements per thread; chunks beyond are re-read from memory.
inline constexpr int kCachedChunks = 4;
/// Rows per block of the backward pass: dgamma/dbeta partials of 16 consecutive rows, summed in
/// row order, then the block partials in block order. Half the CPU's 32: twice the blocks keep
/// more rows in flight per SM (the H200 run with 32 reached 0.18-0.52 of the copy bandwidth).
inline constexpr int kRowBlock = 16;

/// Elements per chunk of dtype T: one 16-byte vector. Every path (aligned or not) gives a thread
/// the same elements, so the order of every sum, and the bits, never depend on the alignment.
template <class T>
inline constexpr int kVec = static_cast<int>(16 / sizeof(T));

/// v[k] = p[i + k] widened for i + k < n, else 0. Aligned: n % V == 0 and p 16-byte aligned,
/// so a chunk is all in or all out and is one 16-byte load.
template <class T, int V, bool Aligned>
__device__ __forceinline__ void load_vec(const T* p, std::int64_t i, std::int64_t n, float (&v)[V]) {
  if constexpr (Aligned) {
    if (i < n) {
      const uint4 raw = *reinterpret_cast<const uint4*>(p + i);
      const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = Io<T>::load(e, k);
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = 0.0f;
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = i + k < n ? Io<T>::load(p, i + k) : 0.0f;
  }
}

/// p[i + k] = v[k] rounded once, for i + k < n.
template <class T, int V, bool Aligned>
__device__ __forceinline__ void store_vec(T* p, std::int64_t i, std::int64_t n, const float (&v)[V]) {
  if constexpr (Aligned) {
    if (i >= n) return;
    uint4 raw;
    T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int k = 0; k < V; ++k) Io<T>::store(e, k, v[k]);
    *reinterpret_cast<uint4*>(p + i) = raw;
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (i + k < n) Io<T>::store(p, i + k, v[k]);
  }
}

/// Parameters (gamma/beta) of elements i..i+V; absent or past n: `fill`. Aligned: 16-byte loads
/// (the parameters are 16-byte aligned and n % V == 0), one or two per chunk.
template <class T, int V, bool Aligned>
__device__ __forceinline__ void load_param(const T* p, std::int64_t i, std::int64_t n, float fill, float (&v)[V]) {
  if constexpr (Aligned) {
    constexpr int kPer = static_cast<int>(16 / sizeof(T));
    static_assert(V % kPer == 0, "a chunk is whole 16-byte vectors of parameters");
    if (p != nullptr && i < n) {
#pragma unroll
      for (int q = 0; q < V; q += kPer) {
        const uint4 raw = *reinterpret_cast<const uint4*>(p + i + q);
        const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
        for (int k = 0; k < kPer; ++k) v[q + k] = Io<T>::load(e, k);
      }
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) v[k] = fill;
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) v[k] = p != nullptr && i + k < n ? Io<T>::load(p, i + k) : fill;
  }
}

/// Sum of `a` (and `b`) over the block; every thread gets the same values. `scratch` holds
/// 2 * 32 floats; the caller's previous use of it must be finished (the leading barrier).
__device__ __forceinline__ float2 block_sum2(float a, float b, float* scratch) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, offset);
    b += __shfl_xor_sync(0xffffffffu, b, offset);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();
  if (lane == 0) {
    scratch[warp] = a;
    scratch[32 + warp] = b;
  }
  __syncthreads();
  float sa = 0.0f, sb = 0.0f;
  for (int w = 0; w < warps; ++w) {
    sa += scratch[w];
    sb += scratch[32 + w];
  }
  return make_float2(sa, sb);
}

/// Threads per row: whole warps, enough for kCachedChunks chunks of V per thread, at most
/// kMaxThreads (the registers of the cached chunks). A function of n and the dtype only, so the
/// sums' order (and the bits) depend on nothing else.
inline constexpr int kMaxThreads = 256;
inline int threads_for(std::int64_t n, int v) {
  const std::int64_t per = static_cast<std::int64_t>(v) * kCachedChunks;
  std::int64_t t = (n + per - 1) / per;
  t = (t + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : t > kMaxThreads ? kMaxThreads : t);
}

}  // namespace ampkit::cuda::norm
