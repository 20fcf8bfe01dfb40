// LayerNorm/RMSNorm forward on CUDA (CUDA layer). Rows of up to 16384 elements: persistent
// blocks (one wave), a row at a time with the next row's loads in flight, each thread holding
// its 16 or 32 elements of the row in registers (row_shape), and at 16 its gamma/beta. Longer
// rows: one block per row, kCachedChunks chunks a thread cached, the rest re-read. mean and
// variance in fp32, two-pass (DESIGN.md section 5); y = (x - mean) * rstd * gamma + beta rounded
// once. Entries of norm_cuda_kernel_list.cpp; the CPU reference (norm_reference.cpp) is the
// yardstick.
#include <cstdint>

#include "ampkit/core/error.hpp"
#include "cuda/norm/norm_cuda.hpp"
#include "cuda/norm/norm_rows_cuda.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"

namespace ampkit::cuda {
namespace {

using namespace norm;

struct FwdArgs {
  std::int64_t rows, n;
  const void* x;
  const void* gamma;
  const void* beta;
  float eps;
  void* y;
  float* mean;
  float* rstd;
  bool rms;
};

// x, y: [rows, n] row-major; gamma, beta: [n]; mean, rstd: [rows].
//   mu = sum(x) / n (0 for RMSNorm), var = sum((x - mu)^2) / n, r = 1 / sqrt(var + eps),
//   y = (x - mu) * r * gamma + beta.
template <class TX, class TP, bool Aligned>
__global__ void __launch_bounds__(kMaxThreads) norm_fwd_kernel(FwdArgs a) {
  constexpr int V = kVec<TX>;
  __shared__ float scratch[64];
  const TX* xs = static_cast<const TX*>(a.x);
  TX* ys = static_cast<TX*>(a.y);
  const TP* gamma = static_cast<const TP*>(a.gamma);
  const TP* beta = static_cast<const TP*>(a.beta);
  const std::int64_t n = a.n, step = static_cast<std::int64_t>(blockDim.x) * V;
  const std::int64_t chunks = (n + step - 1) / step;
  const std::int64_t first = static_cast<std::int64_t>(threadIdx.x) * V;
  const float inv_n = 1.0f / static_cast<float>(n);
  for (std::int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const TX* x = xs + row * n;
    float v[kCachedChunks][V];
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < kCachedChunks; ++c) {
      load_vec<TX, V, Aligned>(x, first + c * step, c < chunks ? n : 0, v[c]);
#pragma unroll
      for (int k = 0; k < V; ++k) sum += v[c][k];
    }
    for (std::int64_t c = kCachedChunks; c < chunks; ++c) {
      float w[V];
      load_vec<TX, V, Aligned>(x, first + c * step, n, w);
#pragma unroll
      for (int k = 0; k < V; ++k) sum += w[k];
    }
    const float mu = a.rms ? 0.0f : block_sum2(sum, 0.0f, scratch).x * inv_n;
    float sq = 0.0f;
#pragma unroll
    for (int c = 0; c < kCachedChunks; ++c)
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float d = first + c * step + k < n && c < chunks ? v[c][k] - mu : 0.0f;
        sq += d * d;
      }
    for (std::int64_t c = kCachedChunks; c < chunks; ++c) {
      float w[V];
      load_vec<TX, V, Aligned>(x, first + c * step, n, w);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const float d = first + c * step + k < n ? w[k] - mu : 0.0f;
        sq += d * d;
      }
    }
    const float var = block_sum2(sq, 0.0f, scratch).x * inv_n;
    const float r = 1.0f / sqrtf(var + a.eps);
    TX* y = ys + row * n;
    const auto emit = [&](std::int64_t i, float(&w)[V]) {
      float g[V], b[V];
      load_param<TP, V, Aligned>(gamma, i, n, 1.0f, g);
      load_param<TP, V, Aligned>(beta, i, n, 0.0f, b);
#pragma unroll
      for (int k = 0; k < V; ++k) w[k] = (w[k] - mu) * r * g[k] + b[k];
      store_vec<TX, V, Aligned>(y, i, n, w);
    };
#pragma unroll
    for (int c = 0; c < kCachedChunks; ++c)
      if (c < chunks) emit(first + c * step, v[c]);
    for (std::int64_t c = kCachedChunks; c < chunks; ++c) {
      float w[V];
      load_vec<TX, V, Aligned>(x, first + c * step, n, w);
      emit(first + c * step, w);
    }
    if (threadIdx.x == 0) {
      if (a.mean != nullptr) a.mean[row] = mu;
      if (a.rstd != nullptr) a.rstd[row] = r;
    }
  }
}

// The row-cached forward. x, y: [rows, n]; rows r0..r0+K of a batch reduced together; thread t
// owns elements t V + c T V (c < C) of every row. The next batch's loads are issued before this
// batch's reductions (two batches in flight a block); CacheParams: gamma/beta of the thread's
// elements loaded once, kept in registers. Same math as norm_fwd_kernel.
template <class TX, class TP, int C, int K, bool Aligned, bool CacheParams>
__global__ void __launch_bounds__(kMaxCachedThreads) norm_fwd_cached_kernel(FwdArgs a) {
  constexpr int V = kVec<TX>;
  __shared__ float scratch[K * 32];
  const TX* xs = static_cast<const TX*>(a.x);
  TX* ys = static_cast<TX*>(a.y);
  const TP* gamma = static_cast<const TP*>(a.gamma);
  const TP* beta = static_cast<const TP*>(a.beta);
  const std::int64_t n = a.n, step = static_cast<std::int64_t>(blockDim.x) * V;
  const std::int64_t first = static_cast<std::int64_t>(threadIdx.x) * V;
  const float inv_n = 1.0f / static_cast<float>(n);
  const std::int64_t batches = (a.rows + K - 1) / K;
  uint4 raw[K][C], next[K][C];
  float pg[CacheParams ? C : 1][V], pb[CacheParams ? C : 1][V];
  if constexpr (CacheParams) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      load_param<TP, V, Aligned>(gamma, first + c * step, n, 1.0f, pg[c]);
      load_param<TP, V, Aligned>(beta, first + c * step, n, 0.0f, pb[c]);
    }
  }
  const auto load_batch = [&](std::int64_t batch, uint4(&to)[K][C]) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const std::int64_t row = batch * K + k;
      const bool in = batch < batches && row < a.rows;
#pragma unroll
      for (int c = 0; c < C; ++c)
        to[k][c] = load_raw<TX, Aligned>(xs + (in ? row : 0) * n, first + c * step, in ? n : 0);
    }
  };
  load_batch(blockIdx.x, raw);
  for (std::int64_t batch = blockIdx.x; batch < batches; batch += gridDim.x) {
    load_batch(batch + gridDim.x, next);
    float mu[K], sq[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      mu[k] = 0.0f;
#pragma unroll
      for (int c = 0; c < C; ++c)
#pragma unroll
        for (int e = 0; e < V; ++e) mu[k] += raw_at<TX>(raw[k][c], e);
    }
    if (a.rms) {
#pragma unroll
      for (int k = 0; k < K; ++k) mu[k] = 0.0f;
    } else {
      block_sum<K>(mu, scratch);
#pragma unroll
      for (int k = 0; k < K; ++k) mu[k] *= inv_n;
    }
#pragma unroll
    for (int k = 0; k < K; ++k) {
      sq[k] = 0.0f;
#pragma unroll
      for (int c = 0; c < C; ++c)
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float d = first + c * step + e < n ? raw_at<TX>(raw[k][c], e) - mu[k] : 0.0f;
          sq[k] += d * d;
        }
    }
    block_sum<K>(sq, scratch);
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const std::int64_t row = batch * K + k;
      if (row >= a.rows) break;
      const float r = 1.0f / sqrtf(sq[k] * inv_n + a.eps);
#pragma unroll
      for (int c = 0; c < C; ++c) {
        const std::int64_t i = first + c * step;
        float g[V], b[V], w[V];
        if constexpr (CacheParams) {
#pragma unroll
          for (int e = 0; e < V; ++e) g[e] = pg[c][e], b[e] = pb[c][e];
        } else {
          load_param<TP, V, Aligned>(gamma, i, n, 1.0f, g);
          load_param<TP, V, Aligned>(beta, i, n, 0.0f, b);
        }
#pragma unroll
        for (int e = 0; e < V; ++e) w[e] = (raw_at<TX>(raw[k][c], e) - mu[k]) * r * g[e] + b[e];
        store_vec<TX, V, Aligned>(ys + row * n, i, n, w);
      }
      if (threadIdx.x == 0) {
        if (a.mean != nullptr) a.mean[row] = mu[k];
        if (a.rstd != nullptr) a.rstd[row] = r;
      }
    }
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
      for (int c = 0; c < C; ++c) raw[k][c] = next[k][c];
  }
}

// Null (an absent operand) counts as aligned.
bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// The row-cached kernel of C chunks: one row a batch (two in flight with the prefetch).
template <class TX, class TP, int C, bool Aligned>
void launch_cached(const FwdArgs& a, int threads, cudaStream_t stream, const char* fn) {
  constexpr int K = 1;
  // gamma/beta in registers at 16 elements a thread: faster on the H200 (docs/CUDA.md); at 32
  // they cost occupancy and were slower.
  const auto kernel = norm_fwd_cached_kernel<TX, TP, C, K, Aligned, C * kVec<TX> == 16>;
  const std::int64_t batches = (a.rows + K - 1) / K, resident = resident_blocks(kernel, threads, fn);
  kernel<<<static_cast<unsigned>(batches < resident ? batches : resident), threads, 0, stream>>>(a);
}

template <class TX, class TP>
void launch(const FwdArgs& a, cudaStream_t stream, const char* fn) {
  constexpr int V = kVec<TX>;
  const bool aligned = a.n % V == 0 && aligned16(a.x) && aligned16(a.y) && aligned16(a.gamma) && aligned16(a.beta);
  const RowShape shape = row_shape(a.n, V);
  if (shape.cached) {
    constexpr int C16 = 16 / V, C32 = 32 / V;
    if (shape.chunks == C16)
      aligned ? launch_cached<TX, TP, C16, true>(a, shape.threads, stream, fn)
              : launch_cached<TX, TP, C16, false>(a, shape.threads, stream, fn);
    else
      aligned ? launch_cached<TX, TP, C32, true>(a, shape.threads, stream, fn)
              : launch_cached<TX, TP, C32, false>(a, shape.threads, stream, fn);
    return;
  }
  const int threads = threads_for(a.n, V);
  const unsigned grid = static_cast<unsigned>(a.rows < (1 << 30) ? a.rows : (1 << 30));
  if (aligned)
    norm_fwd_kernel<TX, TP, true><<<grid, threads, 0, stream>>>(a);
  else
    norm_fwd_kernel<TX, TP, false><<<grid, threads, 0, stream>>>(a);
}

void run_forward(const ops::NormForwardProblem& p, bool rms) {
  const char* fn = rms ? "rms_norm_forward" : "layer_norm_forward";
  if (p.rows == 0) return;
  CudaContext& ctx = context(p.device_index, fn);
  const FwdArgs a{p.rows, p.n, p.x, p.gamma, p.beta, p.eps, p.y, p.mean, p.rstd, rms};
  const bool f32_params = p.param_dtype == DType::f32;
  switch (p.x_dtype) {
    case DType::f32: launch<float, float>(a, ctx.stream, fn); break;
    case DType::bf16:
      f32_params ? launch<__nv_bfloat16, float>(a, ctx.stream, fn)
                 : launch<__nv_bfloat16, __nv_bfloat16>(a, ctx.stream, fn);
      break;
    case DType::f16:
      f32_params ? launch<__half, float>(a, ctx.stream, fn) : launch<__half, __half>(a, ctx.stream, fn);
      break;
    default: fail_with(ErrorKind::internal, fn, "x dtype reached the CUDA kernel unvalidated");
  }
  check_launch(fn, "the forward kernel");
}

}  // namespace

void layer_norm_fwd_cuda(const ops::NormForwardProblem& p) { run_forward(p, false); }
void rms_norm_fwd_cuda(const ops::NormForwardProblem& p) { run_forward(p, true); }

}  // namespace ampkit::cuda
