// LayerNorm/RMSNorm backward on CUDA (CUDA layer). Rows of up to 16384 elements: a fixed number
// of groups of consecutive rows (a function of the shape), one persistent block each, a row at
// a time, each thread holding its 16 or 32 elements of x and dy in registers (row_shape) and its
// dgamma/dbeta sums; at 16, also the next row's loads in flight and (16-bit x) gamma. Longer
// rows: one block per kRowBlock rows, chunks past kCachedChunks re-read. dx from the fp32 row
// sums; dgamma/dbeta as fp32 per-group partials (row order inside the group), then summed over
// the groups in group order and rounded once (DESIGN.md section 5). No atomics: the bits depend
// on the data and the shape only. Entries of norm_cuda_kernel_list.cpp.
#include <cstdint>

#include "ampkit/core/error.hpp"
#include "cuda/norm/norm_cuda.hpp"
#include "cuda/norm/norm_rows_cuda.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"

namespace ampkit::cuda {
namespace {

using namespace norm;

struct BwdArgs {
  std::int64_t rows, n;
  const void* dy;
  const void* x;
  const float* mean;  // null for RMSNorm
  const float* rstd;
  const void* gamma;  // null: 1
  void* dx;           // null: not asked
  float* part_g;      // [blocks][n] or null
  float* part_b;      // [blocks][n] or null
  bool need_x;        // dx or dgamma asked
};

// dy, x, dx: [rows, n]; gamma: [n]; mean, rstd: [rows].
//   xh = (x - mu) r, g = gamma dy, dx = r (g - mean(g) - xh mean(g xh)) (RMSNorm: no mean(g)),
//   dgamma += dy xh, dbeta += dy.
template <class TX, class TP, bool Aligned>
__global__ void __launch_bounds__(kMaxThreads) norm_bwd_kernel(BwdArgs a) {
  constexpr int V = kVec<TX>;
  __shared__ float scratch[64];
  const TP* gamma = static_cast<const TP*>(a.gamma);
  const std::int64_t n = a.n, step = static_cast<std::int64_t>(blockDim.x) * V;
  const std::int64_t chunks = (n + step - 1) / step;
  const std::int64_t first = static_cast<std::int64_t>(threadIdx.x) * V;
  const float inv_n = 1.0f / static_cast<float>(n);
  const std::int64_t blocks = (a.rows + kRowBlock - 1) / kRowBlock;
  for (std::int64_t blk = blockIdx.x; blk < blocks; blk += gridDim.x) {
    float acc_g[kCachedChunks][V] = {}, acc_b[kCachedChunks][V] = {};
    const std::int64_t r0 = blk * kRowBlock, r1 = r0 + kRowBlock < a.rows ? r0 + kRowBlock : a.rows;
    for (std::int64_t row = r0; row < r1; ++row) {
      const TX* dy = static_cast<const TX*>(a.dy) + row * n;
      const TX* x = a.need_x ? static_cast<const TX*>(a.x) + row * n : nullptr;
      const float mu = a.mean != nullptr ? a.mean[row] : 0.0f;
      const float r = a.need_x ? a.rstd[row] : 0.0f;
      float vdy[kCachedChunks][V], vxh[kCachedChunks][V];
      float sg = 0.0f, sgx = 0.0f;
      // One chunk: dy and xh loaded, the row sums and the parameter gradients updated.
      const auto take = [&](std::int64_t c, float(&d)[V], float(&xh)[V], float(&ag)[V], float(&ab)[V]) {
        const std::int64_t i = first + c * step;
        load_vec<TX, V, Aligned>(dy, i, c < chunks ? n : 0, d);
        if (x != nullptr) {
          load_vec<TX, V, Aligned>(x, i, c < chunks ? n : 0, xh);
#pragma unroll
          for (int k = 0; k < V; ++k) xh[k] = (xh[k] - mu) * r;
        } else {
#pragma unroll
          for (int k = 0; k < V; ++k) xh[k] = 0.0f;
        }
        float g[V];
        load_param<TP, V, Aligned>(gamma, i, n, 1.0f, g);
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float gk = g[k] * d[k];
          sg += gk;
          sgx += gk * xh[k];
          ag[k] += d[k] * xh[k];
          ab[k] += d[k];
        }
      };
#pragma unroll
      for (int c = 0; c < kCachedChunks; ++c) take(c, vdy[c], vxh[c], acc_g[c], acc_b[c]);
      for (std::int64_t c = kCachedChunks; c < chunks; ++c) {
        float d[V], xh[V], ag[V], ab[V];
        const std::int64_t i = first + c * step;
        const bool first_row = row == r0;
#pragma unroll
        for (int k = 0; k < V; ++k) {
          ag[k] = !first_row && a.part_g != nullptr && i + k < n ? a.part_g[blk * n + i + k] : 0.0f;
          ab[k] = !first_row && a.part_b != nullptr && i + k < n ? a.part_b[blk * n + i + k] : 0.0f;
        }
        take(c, d, xh, ag, ab);
#pragma unroll
        for (int k = 0; k < V; ++k) {
          if (i + k >= n) continue;
          if (a.part_g != nullptr) a.part_g[blk * n + i + k] = ag[k];
          if (a.part_b != nullptr) a.part_b[blk * n + i + k] = ab[k];
        }
      }
      if (a.dx == nullptr) continue;
      const float2 sums = block_sum2(sg, sgx, scratch);
      const float mg = a.mean != nullptr ? sums.x * inv_n : 0.0f, mgx = sums.y * inv_n;
      TX* dx = static_cast<TX*>(a.dx) + row * n;
      const auto emit = [&](std::int64_t i, const float(&d)[V], const float(&xh)[V]) {
        float g[V], out[V];
        load_param<TP, V, Aligned>(gamma, i, n, 1.0f, g);
#pragma unroll
        for (int k = 0; k < V; ++k) out[k] = r * (g[k] * d[k] - mg - xh[k] * mgx);
        store_vec<TX, V, Aligned>(dx, i, n, out);
      };
#pragma unroll
      for (int c = 0; c < kCachedChunks; ++c)
        if (c < chunks) emit(first + c * step, vdy[c], vxh[c]);
      for (std::int64_t c = kCachedChunks; c < chunks; ++c) {
        const std::int64_t i = first + c * step;
        float d[V], xh[V];
        load_vec<TX, V, Aligned>(dy, i, n, d);
        load_vec<TX, V, Aligned>(x, i, n, xh);
#pragma unroll
        for (int k = 0; k < V; ++k) xh[k] = (xh[k] - mu) * r;
        emit(i, d, xh);
      }
    }
#pragma unroll
    for (int c = 0; c < kCachedChunks; ++c) {
      if (c >= chunks) break;
      const std::int64_t i = first + c * step;
#pragma unroll
      for (int k = 0; k < V; ++k) {
        if (i + k >= n) continue;
        if (a.part_g != nullptr) a.part_g[blk * n + i + k] = acc_g[c][k];
        if (a.part_b != nullptr) a.part_b[blk * n + i + k] = acc_b[c][k];
      }
    }
  }
}

// p[i + k] = v[k] for i + k < n. Aligned: n % V == 0 and p 16-byte aligned (float4 stores).
template <int V, bool Aligned>
__device__ __forceinline__ void store_floats(float* p, std::int64_t i, std::int64_t n, const float (&v)[V]) {
  if constexpr (Aligned) {
    if (i >= n) return;
#pragma unroll
    for (int q = 0; q < V; q += 4)
      *reinterpret_cast<float4*>(p + i + q) = make_float4(v[q], v[q + 1], v[q + 2], v[q + 3]);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k)
      if (i + k < n) p[i + k] = v[k];
  }
}

// The row-cached backward. Block: groups g = blockIdx.x, + gridDim.x, ... of `group_rows`
// consecutive rows, in row order; thread t owns elements t V + c T V (c < C) of every row: its
// dy and x (raw, the next row's already loading) and its dgamma/dbeta sums over the group,
// written as the group's partials; CacheParams: its gamma loaded once, kept in registers. Same
// math as norm_bwd_kernel.
template <class TX, class TP, int C, bool Aligned, bool CacheParams>
__global__ void __launch_bounds__(kMaxCachedThreads) norm_bwd_cached_kernel(BwdArgs a, std::int64_t group_rows) {
  constexpr int V = kVec<TX>;
  __shared__ float scratch[64];
  const TP* gamma = static_cast<const TP*>(a.gamma);
  const TX* dys = static_cast<const TX*>(a.dy);
  const TX* xs = static_cast<const TX*>(a.x);
  const std::int64_t n = a.n, step = static_cast<std::int64_t>(blockDim.x) * V;
  const std::int64_t first = static_cast<std::int64_t>(threadIdx.x) * V;
  const float inv_n = 1.0f / static_cast<float>(n);
  const std::int64_t groups = (a.rows + group_rows - 1) / group_rows;
  // The row's chunks and statistics (mean, rstd: loaded with them, off the critical path).
  const auto load_row = [&](std::int64_t row, bool in, auto& d, auto& x, float2& stats) {
    stats.x = in && a.mean != nullptr ? a.mean[row] : 0.0f;
    stats.y = in && a.need_x ? a.rstd[row] : 0.0f;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      d[c] = load_raw<TX, Aligned>(dys + (in ? row : 0) * n, first + c * step, in ? n : 0);
      x[c] = load_raw<TX, Aligned>(xs + (in ? row : 0) * n, first + c * step, in && a.need_x ? n : 0);
    }
  };
  float pg[CacheParams ? C : 1][V];
  if constexpr (CacheParams) {
#pragma unroll
    for (int c = 0; c < C; ++c) load_param<TP, V, Aligned>(gamma, first + c * step, n, 1.0f, pg[c]);
  }
  for (std::int64_t grp = blockIdx.x; grp < groups; grp += gridDim.x) {
    const std::int64_t r0 = grp * group_rows, r1 = r0 + group_rows < a.rows ? r0 + group_rows : a.rows;
    float acc_g[C][V] = {}, acc_b[C][V] = {};
    // Prefetch: the next row's chunks (16 elements a thread; 32 leave no registers for them).
    constexpr int CN = C * V <= 16 ? C : 1;
    uint4 rd[C], rx[C], nd[CN], nx[CN];
    float2 st, nst;
    load_row(r0, true, rd, rx, st);
    for (std::int64_t row = r0; row < r1; ++row) {
      if constexpr (CN == C) load_row(row + 1, row + 1 < r1, nd, nx, nst);
      const float mu = st.x, r = st.y;
      float sums[2] = {0.0f, 0.0f};  // sum(g), sum(g xh)
#pragma unroll
      for (int c = 0; c < C; ++c) {
        float g[V];
        if constexpr (CacheParams) {
#pragma unroll
          for (int e = 0; e < V; ++e) g[e] = pg[c][e];
        } else {
          load_param<TP, V, Aligned>(gamma, first + c * step, n, 1.0f, g);
        }
#pragma unroll
        for (int e = 0; e < V; ++e) {
          const float d = raw_at<TX>(rd[c], e), xh = a.need_x ? (raw_at<TX>(rx[c], e) - mu) * r : 0.0f;
          const float gk = g[e] * d;
          sums[0] += gk;
          sums[1] += gk * xh;
          acc_g[c][e] += d * xh;
          acc_b[c][e] += d;
        }
      }
      if (a.dx != nullptr) {
        block_sum<2>(sums, scratch);
        const float mg = a.mean != nullptr ? sums[0] * inv_n : 0.0f, mgx = sums[1] * inv_n;
        TX* dx = static_cast<TX*>(a.dx) + row * n;
#pragma unroll
        for (int c = 0; c < C; ++c) {
          const std::int64_t i = first + c * step;
          float g[V], out[V];
          if constexpr (CacheParams) {
#pragma unroll
            for (int e = 0; e < V; ++e) g[e] = pg[c][e];
          } else {
            load_param<TP, V, Aligned>(gamma, i, n, 1.0f, g);
          }
#pragma unroll
          for (int e = 0; e < V; ++e) {
            const float d = raw_at<TX>(rd[c], e), xh = (raw_at<TX>(rx[c], e) - mu) * r;
            out[e] = r * (g[e] * d - mg - xh * mgx);
          }
          store_vec<TX, V, Aligned>(dx, i, n, out);
        }
      }
      if constexpr (CN == C) {
#pragma unroll
        for (int c = 0; c < C; ++c) rd[c] = nd[c], rx[c] = nx[c];
        st = nst;
      } else if (row + 1 < r1) {
        load_row(row + 1, true, rd, rx, st);
      }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const std::int64_t i = first + c * step;
      if (a.part_g != nullptr) store_floats<V, Aligned>(a.part_g + grp * n, i, n, acc_g[c]);
      if (a.part_b != nullptr) store_floats<V, Aligned>(a.part_b + grp * n, i, n, acc_b[c]);
    }
  }
}

// out[j] = (out[j] when accumulating) + the sum of the partials of column j, rounded once to TP.
// A 32 x 32 thread block takes 32 columns: thread (c, t) sums partials t, t + 32, t + 64, ... of
// column c in fp32 (coalesced over c), then thread (c, 0) adds the 32 sums in t order in double.
// The order depends on the partial count only, never on the grid.
template <class TP>
__global__ void column_sum_kernel(const float* part, std::int64_t blocks, std::int64_t n, TP* out, bool accumulate) {
  __shared__ float sums[32][33];
  const int c = threadIdx.x, t = threadIdx.y;
  for (std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * 32; j0 < n;
       j0 += static_cast<std::int64_t>(gridDim.x) * 32) {
    const std::int64_t j = j0 + c;
    float s = 0.0f;
    if (j < n)
      for (std::int64_t b = t; b < blocks; b += 32) s += part[b * n + j];
    sums[t][c] = s;
    __syncthreads();
    if (t == 0 && j < n) {
      double total = accumulate ? static_cast<double>(Io<TP>::load(out, j)) : 0.0;
      for (int u = 0; u < 32; ++u) total += static_cast<double>(sums[u][c]);
      Io<TP>::store(out, j, static_cast<float>(total));
    }
    __syncthreads();
  }
}

// Null (an absent operand) counts as aligned.
bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

// Rows per partial: the dgamma/dbeta partials are a function of the shape only (never of the
// GPU), sized so that one wave of the H200 takes every group: 132 SMs, each running
// 512 / threads blocks at these kernels' registers (about 128 a thread).
inline constexpr std::int64_t kWaveSms = 132, kThreadsPerSm = 512;
struct BwdPlan {
  RowShape shape;
  std::int64_t group_rows = kRowBlock, groups = 0;
};
BwdPlan bwd_plan(std::int64_t rows, std::int64_t n, int v) {
  BwdPlan plan;
  plan.shape = row_shape(n, v);
  if (plan.shape.cached) {
    const std::int64_t per_sm = kThreadsPerSm / plan.shape.threads;
    const std::int64_t target = kWaveSms * (per_sm > 1 ? per_sm : 1);
    plan.group_rows = (rows + target - 1) / target;
    if (plan.group_rows < 2) plan.group_rows = 2;
  }
  plan.groups = (rows + plan.group_rows - 1) / plan.group_rows;
  return plan;
}

template <class TX, class TP, int C, bool Aligned>
void launch_cached(const BwdArgs& a, const BwdPlan& plan, cudaStream_t stream, const char* fn) {
  // gamma in registers for 16-bit x at 16 elements a thread: faster on the H200 (docs/CUDA.md);
  // with f32 x or 32 elements a thread it spills or costs occupancy and was slower.
  const auto kernel = norm_bwd_cached_kernel < TX, TP, C, Aligned, sizeof(TX) == 2 && C * kVec<TX> == 16 > ;
  const std::int64_t resident = resident_blocks(kernel, plan.shape.threads, fn);
  const std::int64_t grid = plan.groups < resident ? plan.groups : resident;
  kernel<<<static_cast<unsigned>(grid), plan.shape.threads, 0, stream>>>(a, plan.group_rows);
}

template <class TX, class TP>
void launch(const ops::NormBackwardProblem& p, const BwdPlan& plan, float* partials, cudaStream_t stream,
            const char* fn) {
  constexpr int V = kVec<TX>;
  const std::int64_t blocks = plan.groups;
  if (p.rows > 0) {
    float* part_g = p.dgamma != nullptr ? partials : nullptr;
    float* part_b = p.dbeta != nullptr ? partials + (part_g != nullptr ? blocks * p.n : 0) : nullptr;
    const BwdArgs a{p.rows, p.n, p.dy, p.x, p.mean, p.rstd, p.gamma, p.dx, part_g, part_b, p.x != nullptr};
    const bool aligned = p.n % V == 0 && aligned16(p.dy) && aligned16(p.x) && aligned16(p.dx) && aligned16(p.gamma);
    if (plan.shape.cached) {
      constexpr int C16 = 16 / V, C32 = 32 / V;
      if (plan.shape.chunks == C16)
        aligned ? launch_cached<TX, TP, C16, true>(a, plan, stream, fn)
                : launch_cached<TX, TP, C16, false>(a, plan, stream, fn);
      else
        aligned ? launch_cached<TX, TP, C32, true>(a, plan, stream, fn)
                : launch_cached<TX, TP, C32, false>(a, plan, stream, fn);
    } else {
      const int threads = threads_for(p.n, V);
      const unsigned grid = static_cast<unsigned>(blocks < (1 << 30) ? blocks : (1 << 30));
      if (aligned)
        norm_bwd_kernel<TX, TP, true><<<grid, threads, 0, stream>>>(a);
      else
        norm_bwd_kernel<TX, TP, false><<<grid, threads, 0, stream>>>(a);
    }
  }
  const unsigned cols = static_cast<unsigned>((p.n + 31) / 32 < (1 << 20) ? (p.n + 31) / 32 : (1 << 20));
  const dim3 threads32(32, 32);
  const std::int64_t used = p.rows > 0 ? blocks : 0;
  if (p.dgamma != nullptr)
    column_sum_kernel<TP>
        <<<cols, threads32, 0, stream>>>(partials, used, p.n, static_cast<TP*>(p.dgamma), p.accumulate);
  if (p.dbeta != nullptr)
    column_sum_kernel<TP><<<cols, threads32, 0, stream>>>(partials + (p.dgamma != nullptr ? blocks * p.n : 0), used,
                                                          p.n, static_cast<TP*>(p.dbeta), p.accumulate);
}

void run_backward(const ops::NormBackwardProblem& p, bool rms) {
  const char* fn = rms ? "rms_norm_backward" : "layer_norm_backward";
  if (p.dx == nullptr && p.dgamma == nullptr && p.dbeta == nullptr) return;
  CudaContext& ctx = context(p.device_index, fn);
  const BwdPlan plan = bwd_plan(p.rows, p.n, static_cast<int>(16 / dtype_size(p.x_dtype)));
  const std::int64_t outputs = (p.dgamma != nullptr ? 1 : 0) + (p.dbeta != nullptr ? 1 : 0);
  float* partials =
      static_cast<float*>(workspace(ctx, static_cast<std::size_t>(plan.groups * p.n * outputs) * sizeof(float), fn));
  const bool f32_params = p.param_dtype == DType::f32;
  switch (p.x_dtype) {
    case DType::f32: launch<float, float>(p, plan, partials, ctx.stream, fn); break;
    case DType::bf16:
      f32_params ? launch<__nv_bfloat16, float>(p, plan, partials, ctx.stream, fn)
                 : launch<__nv_bfloat16, __nv_bfloat16>(p, plan, partials, ctx.stream, fn);
      break;
    case DType::f16:
      f32_params ? launch<__half, float>(p, plan, partials, ctx.stream, fn)
                 : launch<__half, __half>(p, plan, partials, ctx.stream, fn);
      break;
    default: fail_with(ErrorKind::internal, fn, "dy dtype reached the CUDA kernel unvalidated");
  }
  check_launch(fn, "the backward kernels");
}

}  // namespace

void layer_norm_bwd_cuda(const ops::NormBackwardProblem& p) { run_backward(p, false); }
void rms_norm_bwd_cuda(const ops::NormBackwardProblem& p) { run_backward(p, true); }

}  // namespace ampkit::cuda
