// Row helpers of the CUDA LayerNorm/RMSNorm kernels (CUDA layer, internal): vector loads and
// stores of V consecutive elements widened to fp32, raw 16-byte chunks kept in registers, a
// block-wide sum whose order depends on the block size only (warp butterfly, then the warps in
// order), so every thread gets the same bits, and the shape of the row-cached kernels. Included
// by norm_fwd_cuda.cu and norm_bwd_cuda.cu.
#pragma once

#include <cstdint>

#include "cuda/common/element_cuda.cuh"
#include "cuda/runtime/cuda_check.hpp"

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

/// Sums of v[0..N) over the block, in place, each in the order of block_sum2; every thread gets
/// the same values. `scratch` holds N * 32 floats; the leading barrier ends its previous use.
template <int N>
__device__ __forceinline__ void block_sum(float (&v)[N], float* scratch) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
#pragma unroll
    for (int q = 0; q < N; ++q) v[q] += __shfl_xor_sync(0xffffffffu, v[q], offset);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  __syncthreads();
  if (lane == 0)
#pragma unroll
    for (int q = 0; q < N; ++q) scratch[q * 32 + warp] = v[q];
  __syncthreads();
#pragma unroll
  for (int q = 0; q < N; ++q) {
    float s = 0.0f;
    for (int w = 0; w < warps; ++w) s += scratch[q * 32 + w];
    v[q] = s;
  }
}

/// Elements i..i+V of p (V = kVec<T>) as they are stored, in one 16-byte register chunk; past n
/// (or with n = 0): zero bits. Aligned: as load_vec.
template <class T, bool Aligned>
__device__ __forceinline__ uint4 load_raw(const T* p, std::int64_t i, std::int64_t n) {
  uint4 raw = make_uint4(0u, 0u, 0u, 0u);
  if constexpr (Aligned) {
    if (i < n) raw = *reinterpret_cast<const uint4*>(p + i);
  } else {
    T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int k = 0; k < kVec<T>; ++k)
      if (i + k < n) e[k] = p[i + k];
  }
  return raw;
}

/// Element k of a raw chunk, widened.
template <class T>
__device__ __forceinline__ float raw_at(const uint4& raw, int k) {
  return Io<T>::load(reinterpret_cast<const T*>(&raw), k);
}

/// The row-cached kernels: each of `threads` threads holds `chunks` 16-byte chunks of a row
/// (thread t: elements t V + c threads V, c < chunks), so x and dy are read once. A function of
/// n and the dtype only (the bits depend on it); cached false: the row is too long (more than
/// kMaxCachedThreads threads of kMaxCachedChunks chunks) and the re-reading kernels run.
inline constexpr int kMaxCachedThreads = 512;
struct RowShape {
  bool cached = false;
  int threads = 0;
  int chunks = 0;  // 16 or 32 elements a thread: 16 / V or 32 / V chunks
};
inline RowShape row_shape(std::int64_t n, int v) {
  for (int elements : {16, 32}) {
    std::int64_t t = (n + elements - 1) / elements;
    t = t < 32 ? 32 : (t + 31) / 32 * 32;
    if (t <= kMaxCachedThreads) return {true, static_cast<int>(t), elements / v};
  }
  return {};
}

/// Blocks of `kernel` (with `threads` threads) resident on the current device at once: the grid
/// of the persistent kernels (never a factor of the bits). Throws Error naming `fn`.
template <class Kernel>
std::int64_t resident_blocks(Kernel kernel, int threads, const char* fn) {
  int device = 0, sms = 0, per_sm = 0;
  check_cuda(cudaGetDevice(&device), fn, "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), fn,
             "cudaDeviceGetAttribute(multiProcessorCount)");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0), fn,
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return static_cast<std::int64_t>(sms) * (per_sm > 0 ? per_sm : 1);
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
