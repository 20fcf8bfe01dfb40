// Causal attention on CUDA (CUDA layer): a plain, obviously correct kernel, fp32 math, the
// semantics of docs/ATTENTION.md and attention_reference.cpp:
//   S[i, j] = s q_i . k_j (j <= i), lse_i = log sum_j exp(S[i, j] - m_i) + m_i, out_i = sum_j
//   P[i, j] v_j with P = exp(S - lse); backward from the saved lse with Delta_i = dout_i . out_i,
//   dS = P (dout_i . v_j - Delta_i), dq_i = s sum_j dS k_j, dk_j = s sum_i dS q_i, dv_j = sum_i P dout_i.
// One block of 4 warps a (batch, head, row): keys (or queries) in chunks of kChunk, each warp
// taking every 4th one and computing its dot products over the head's columns with its lanes
// (a fixed butterfly, so every lane holds the same bits); the chunk's weights go to shared
// memory and every thread adds them, in key order, into its own output columns (kCols a thread,
// more passes for head_dim > kThreads * kCols). Forward: a first pass for the row max m_i, a
// second for sum exp(S - m_i) and the output. Backward: a query-row kernel (Delta_i, dq) and a
// key-row kernel (dk, dv) reading Delta from workspace; no atomics, so the bits depend on the
// data only, never on the grid. Entries of attention_cuda_kernel_list.cpp.
#include <cstdint>

#include "cuda/attention/attention_cuda.hpp"
#include "cuda/common/element_cuda.cuh"
#include "cuda/common/grid_cuda.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"

namespace ampkit::cuda {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kChunk = 64;  // keys (queries) whose weights sit in shared memory at once
constexpr int kCols = 4;    // output columns a thread holds per pass
constexpr unsigned kFullMask = 0xffffffffu;

// Element (b, i, c) of an operand, widened to fp32.
__device__ __forceinline__ float at(const ops::AttentionInput& x, std::int64_t b, std::int64_t i, std::int64_t c) {
  return load_as_float(x.data, x.dtype, b * x.batch_stride + i * x.row_stride + c);
}

// Stores v (accumulating: old + v) at element (b, i, c), rounded once.
__device__ __forceinline__ void put(const ops::AttentionOutput& y, std::int64_t b, std::int64_t i, std::int64_t c,
                                    float v, bool accumulate) {
  const std::int64_t e = b * y.batch_stride + i * y.row_stride + c;
  if (accumulate) v = load_as_float(y.data, y.dtype, e) + v;
  store_from_float(y.data, y.dtype, e, v);
}

// x_i . y_j over columns [c0, c0 + d), by the calling warp (all 32 lanes): each lane a stride of
// columns, then a butterfly; every lane returns the same bits.
__device__ __forceinline__ float warp_dot(const ops::AttentionInput& x, std::int64_t i, const ops::AttentionInput& y,
                                          std::int64_t j, std::int64_t b, std::int64_t c0, std::int64_t d) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  float s = 0.0f;
  for (std::int64_t c = lane; c < d; c += 32) s = fmaf(at(x, b, i, c0 + c), at(y, b, j, c0 + c), s);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(kFullMask, s, offset);
  return s;
}

// Row `row` of the (batch, heads, seq) rows: its batch, head and position.
struct RowIndex {
  std::int64_t b, h, i;
};
__device__ __forceinline__ RowIndex row_index(std::int64_t row, std::int64_t heads, std::int64_t seq) {
  const std::int64_t bh = row / seq;
  return {bh / heads, bh % heads, row - bh * seq};
}

__global__ void __launch_bounds__(kThreads) attention_fwd_kernel(ops::AttentionForwardProblem p) {
  __shared__ float weight[kChunk];
  const int warp = static_cast<int>(threadIdx.x / 32);
  const std::int64_t d = p.head_dim, rows = p.batch * p.heads * p.seq;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const RowIndex r = row_index(row, p.heads, p.seq);
    const std::int64_t c0 = r.h * d, keys = r.i + 1;
    // Pass 1: m = max_j S[i, j].
    float m = -INFINITY;
    for (std::int64_t j0 = 0; j0 < keys; j0 += kChunk) {
      const int count = static_cast<int>(keys - j0 < kChunk ? keys - j0 : kChunk);
      for (int jj = warp; jj < count; jj += kWarps) {
        const float s = p.scale * warp_dot(p.q, r.i, p.k, j0 + jj, r.b, c0, d);
        if (threadIdx.x % 32 == 0) weight[jj] = s;
      }
      __syncthreads();
      for (int jj = 0; jj < count; ++jj) m = fmaxf(m, weight[jj]);
      __syncthreads();
    }
    // Pass 2, per group of columns: l = sum_j exp(S - m) (every thread, in key order), and
    // out = sum_j exp(S - m) v_j / l.
    float l = 0.0f;
    for (std::int64_t g = 0; g < d; g += static_cast<std::int64_t>(kThreads) * kCols) {
      float acc[kCols] = {};
      l = 0.0f;
      for (std::int64_t j0 = 0; j0 < keys; j0 += kChunk) {
        const int count = static_cast<int>(keys - j0 < kChunk ? keys - j0 : kChunk);
        for (int jj = warp; jj < count; jj += kWarps) {
          const float s = p.scale * warp_dot(p.q, r.i, p.k, j0 + jj, r.b, c0, d);
          if (threadIdx.x % 32 == 0) weight[jj] = expf(s - m);
        }
        __syncthreads();
        for (int jj = 0; jj < count; ++jj) {
          const float w = weight[jj];
          l += w;
#pragma unroll
          for (int t = 0; t < kCols; ++t) {
            const std::int64_t c = g + threadIdx.x + static_cast<std::int64_t>(t) * kThreads;
            if (c < d) acc[t] = fmaf(w, at(p.v, r.b, j0 + jj, c0 + c), acc[t]);
          }
        }
        __syncthreads();
      }
#pragma unroll
      for (int t = 0; t < kCols; ++t) {
        const std::int64_t c = g + threadIdx.x + static_cast<std::int64_t>(t) * kThreads;
        if (c < d) put(p.out, r.b, r.i, c0 + c, acc[t] / l, false);
      }
    }
    if (threadIdx.x == 0) p.lse[row] = m + logf(l);
  }
}

// Query rows: Delta_i = dout_i . out_i (to workspace), and dq_i when asked for.
__global__ void __launch_bounds__(kThreads) attention_bwd_query_kernel(ops::AttentionBackwardProblem p, float* delta) {
  __shared__ float weight[kChunk];
  __shared__ float warp_sums[kWarps];
  const int warp = static_cast<int>(threadIdx.x / 32);
  const std::int64_t d = p.head_dim, rows = p.batch * p.heads * p.seq;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const RowIndex r = row_index(row, p.heads, p.seq);
    const std::int64_t c0 = r.h * d, keys = r.i + 1;
    // Delta: each thread a stride of columns, each warp a butterfly, the warps in order.
    float part = 0.0f;
    for (std::int64_t c = threadIdx.x; c < d; c += kThreads)
      part = fmaf(at(p.dout, r.b, r.i, c0 + c), at(p.out, r.b, r.i, c0 + c), part);
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) part += __shfl_xor_sync(kFullMask, part, offset);
    if (threadIdx.x % 32 == 0) warp_sums[warp] = part;
    __syncthreads();
    float dl = 0.0f;
    for (int w = 0; w < kWarps; ++w) dl += warp_sums[w];
    __syncthreads();  // warp_sums is rewritten by the next row
    if (threadIdx.x == 0) delta[row] = dl;
    if (p.dq.data == nullptr) continue;
    const float lse = p.lse[row];
    for (std::int64_t g = 0; g < d; g += static_cast<std::int64_t>(kThreads) * kCols) {
      float acc[kCols] = {};
      for (std::int64_t j0 = 0; j0 < keys; j0 += kChunk) {
        const int count = static_cast<int>(keys - j0 < kChunk ? keys - j0 : kChunk);
        for (int jj = warp; jj < count; jj += kWarps) {
          const std::int64_t j = j0 + jj;
          const float prob = expf(p.scale * warp_dot(p.q, r.i, p.k, j, r.b, c0, d) - lse);
          const float dp = warp_dot(p.dout, r.i, p.v, j, r.b, c0, d);
          if (threadIdx.x % 32 == 0) weight[jj] = prob * (dp - dl);
        }
        __syncthreads();
        for (int jj = 0; jj < count; ++jj) {
          const float w = weight[jj];
#pragma unroll
          for (int t = 0; t < kCols; ++t) {
            const std::int64_t c = g + threadIdx.x + static_cast<std::int64_t>(t) * kThreads;
            if (c < d) acc[t] = fmaf(w, at(p.k, r.b, j0 + jj, c0 + c), acc[t]);
          }
        }
        __syncthreads();
      }
#pragma unroll
      for (int t = 0; t < kCols; ++t) {
        const std::int64_t c = g + threadIdx.x + static_cast<std::int64_t>(t) * kThreads;
        if (c < d) put(p.dq, r.b, r.i, c0 + c, p.scale * acc[t], p.accumulate);
      }
    }
  }
}

// Key rows: dk_j and dv_j (whichever is asked for), over the queries i >= j in order.
__global__ void __launch_bounds__(kThreads)
    attention_bwd_key_kernel(ops::AttentionBackwardProblem p, const float* delta) {
  __shared__ float prob_s[kChunk];
  __shared__ float ds_s[kChunk];
  const int warp = static_cast<int>(threadIdx.x / 32);
  const std::int64_t d = p.head_dim, rows = p.batch * p.heads * p.seq;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    // r.i is the key position j; first_row is row (b, h, 0) of lse and Delta.
    const RowIndex r = row_index(row, p.heads, p.seq);
    const std::int64_t c0 = r.h * d, j = r.i, first_row = row - r.i;
    for (std::int64_t g = 0; g < d; g += static_cast<std::int64_t>(kThreads) * kCols) {
      float acc_k[kCols] = {}, acc_v[kCols] = {};
      for (std::int64_t i0 = j; i0 < p.seq; i0 += kChunk) {
        const int count = static_cast<int>(p.seq - i0 < kChunk ? p.seq - i0 : kChunk);
        for (int ii = warp; ii < count; ii += kWarps) {
          const std::int64_t i = i0 + ii;
          const float prob = expf(p.scale * warp_dot(p.q, i, p.k, j, r.b, c0, d) - p.lse[first_row + i]);
          const float dp = warp_dot(p.dout, i, p.v, j, r.b, c0, d);
          if (threadIdx.x % 32 == 0) {
            prob_s[ii] = prob;
            ds_s[ii] = prob * (dp - delta[first_row + i]);
          }
        }
        __syncthreads();
        for (int ii = 0; ii < count; ++ii) {
          const float pw = prob_s[ii], dw = ds_s[ii];
#pragma unroll
          for (int t = 0; t < kCols; ++t) {
            const std::int64_t c = g + threadIdx.x + static_cast<std::int64_t>(t) * kThreads;
            if (c < d) {
              acc_k[t] = fmaf(dw, at(p.q, r.b, i0 + ii, c0 + c), acc_k[t]);
              acc_v[t] = fmaf(pw, at(p.dout, r.b, i0 + ii, c0 + c), acc_v[t]);
            }
          }
        }
        __syncthreads();
      }
#pragma unroll
      for (int t = 0; t < kCols; ++t) {
        const std::int64_t c = g + threadIdx.x + static_cast<std::int64_t>(t) * kThreads;
        if (c >= d) continue;
        if (p.dk.data != nullptr) put(p.dk, r.b, j, c0 + c, p.scale * acc_k[t], p.accumulate);
        if (p.dv.data != nullptr) put(p.dv, r.b, j, c0 + c, acc_v[t], p.accumulate);
      }
    }
  }
}

}  // namespace

void attention_forward_cuda(const ops::AttentionForwardProblem& p) {
  const char* fn = "attention_forward";
  const std::int64_t rows = p.batch * p.heads * p.seq;
  if (rows == 0) return;
  CudaContext& ctx = context(p.device_index, fn);
  attention_fwd_kernel<<<row_blocks(rows), kThreads, 0, ctx.stream>>>(p);
  check_launch(fn, "the forward kernel");
}

void attention_backward_cuda(const ops::AttentionBackwardProblem& p) {
  const char* fn = "attention_backward";
  const std::int64_t rows = p.batch * p.heads * p.seq;
  if (rows == 0) return;
  CudaContext& ctx = context(p.device_index, fn);
  auto* delta = static_cast<float*>(workspace(ctx, static_cast<std::size_t>(rows) * sizeof(float), fn));
  attention_bwd_query_kernel<<<row_blocks(rows), kThreads, 0, ctx.stream>>>(p, delta);
  check_launch(fn, "the query-row kernel");
  if (p.dk.data == nullptr && p.dv.data == nullptr) return;
  attention_bwd_key_kernel<<<row_blocks(rows), kThreads, 0, ctx.stream>>>(p, delta);
  check_launch(fn, "the key-row kernel");
}

}  // namespace ampkit::cuda
