// The multi-tensor optimizer step on the GPU (CUDA layer): the stages of ops::MultiTensorProblem
// over a device table of parameters (rows) and the row of every 4096-element chunk, so one
// launch covers every parameter. Bits equal the cpu's (src/cpu/optimizer/optimizer_cpu.cpp):
// - AdamW / SGD: per element the same fp32 operations in the same order, each rounded once
//   (the _rn intrinsics: nothing is contracted into an FMA), with the scalars AdamW's front end
//   computed on the host in double (adamw_step_scalars); the grad scale, the skip flag and the
//   step count are read from the StepScalars in device memory.
// - The gradient norm: global_grad_norm's order exactly. Each chunk is one of its 4096-element
//   blocks of one view; thread (chunk, lane) adds the squares of elements lane, lane + 8, ... of
//   the chunk in order in fp64 (a float's square is exact in double), the chunk's 8 lane sums
//   are added in lane order, and one thread adds the chunk sums in chunk order (view after view)
//   and takes the sqrt: no result depends on the grid.
// - Finiteness: the total is finite exactly when every element is (each square of a finite
//   float is at most 2^256, and at most 2^43 of them are added), so the flag is isfinite(total),
//   all_finite's answer.
// - Accumulation: acc = source, or acc + source in fp32 (convert / add_accumulate).
#include <cstdint>

#include "cuda/common/element_cuda.cuh"
#include "cuda/optimizer/optimizer_cuda.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"
#include "ops/optimizer/step_decision.hpp"

namespace ampkit::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kLanes = 8;                               // the norm's fp64 lanes per chunk
constexpr int kNormChunksPerBlock = kThreads / kLanes;  // 32
constexpr std::int64_t kMaxGrid = 1 << 16;

unsigned grid_for(std::int64_t items) {
  const std::int64_t g = items < 1 ? 1 : items;
  return static_cast<unsigned>(g < kMaxGrid ? g : kMaxGrid);
}

// Element range of chunk c of its row.
struct ChunkRange {
  const ops::MultiTensorRow* row;
  std::int64_t begin, end;
};
__device__ __forceinline__ ChunkRange chunk_range(const ops::MultiTensorRow* rows, const std::int32_t* chunk_rows,
                                                  std::int64_t c) {
  const ops::MultiTensorRow* r = rows + chunk_rows[c];
  const std::int64_t begin = (c - r->first_chunk) * ops::kMultiChunk;
  const std::int64_t end = begin + ops::kMultiChunk < r->n ? begin + ops::kMultiChunk : r->n;
  return {r, begin, end};
}

__global__ void accumulate_kernel(const ops::MultiTensorRow* rows, const std::int32_t* chunk_rows, std::int64_t chunks,
                                  bool first, const float* loss, StepScalars* scalars) {
  if (blockIdx.x == 0 && threadIdx.x == 0 && loss != nullptr)
    scalars->loss_sum = first ? static_cast<double>(*loss) : __dadd_rn(scalars->loss_sum, static_cast<double>(*loss));
  for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const ChunkRange cr = chunk_range(rows, chunk_rows, c);
    const ops::MultiTensorRow& r = *cr.row;
    if (r.source == nullptr) continue;
    for (std::int64_t i = cr.begin + threadIdx.x; i < cr.end; i += blockDim.x) {
      const float x = load_as_float(r.source, r.source_dtype, i);
      r.acc[i] = first ? x : __fadd_rn(r.acc[i], x);
    }
  }
}

__global__ void norm_partials_kernel(const ops::MultiTensorRow* rows, const std::int32_t* chunk_rows,
                                     std::int64_t chunks, double* partials) {
  __shared__ double lanes[kThreads];
  const int lane = threadIdx.x % kLanes;
  const int local = threadIdx.x / kLanes;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kNormChunksPerBlock; base < chunks;
       base += static_cast<std::int64_t>(gridDim.x) * kNormChunksPerBlock) {
    const std::int64_t c = base + local;
    double sum = 0.0;
    if (c < chunks) {
      const ChunkRange cr = chunk_range(rows, chunk_rows, c);
      for (std::int64_t i = cr.begin + lane; i < cr.end; i += kLanes) {
        const double e = load_as_float(cr.row->grad, cr.row->grad_dtype, i);
        sum = __dadd_rn(sum, __dmul_rn(e, e));
      }
    }
    lanes[threadIdx.x] = sum;
    __syncthreads();
    if (lane == 0 && c < chunks) {
      double total = 0.0;
      for (int k = 0; k < kLanes; ++k) total = __dadd_rn(total, lanes[threadIdx.x + k]);
      partials[c] = total;
    }
    __syncthreads();
  }
}

__global__ void decide_kernel(const double* partials, std::int64_t chunks, StepScalars* scalars, StepRule rule) {
  double total = 0.0;
  for (std::int64_t c = 0; c < chunks; ++c) total = __dadd_rn(total, partials[c]);
  ops::decide_step(*scalars, rule, __dsqrt_rn(total), isfinite(total));
}

__global__ void adamw_kernel(const ops::MultiTensorRow* rows, const std::int32_t* chunk_rows, std::int64_t chunks,
                             StepScalars* scalars, ops::AdamWScalars k) {
  if (scalars->skip != 0) return;
  const std::int64_t w = scalars->steps - k.step_base;
  if (w < 0 || w >= kStepWindow) {
    if (blockIdx.x == 0 && threadIdx.x == 0) scalars->window_miss = 1;
    return;
  }
  const float scale = scalars->grad_scale;
  const float step_size = k.step_size[w], rsqrt_bc2 = k.rsqrt_bc2[w];
  for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const ChunkRange cr = chunk_range(rows, chunk_rows, c);
    const ops::MultiTensorRow& r = *cr.row;
    const float lr_wd = r.decay ? k.lr_wd : 0.0f;
    for (std::int64_t i = cr.begin + threadIdx.x; i < cr.end; i += blockDim.x) {
      const float g = __fmul_rn(load_as_float(r.grad, r.grad_dtype, i), scale);
      const float mi = __fadd_rn(__fmul_rn(k.b1, r.m[i]), __fmul_rn(k.c1, g));
      const float vi = __fadd_rn(__fmul_rn(k.b2, r.v[i]), __fmul_rn(k.c2, __fmul_rn(g, g)));
      const float denom = __fadd_rn(__fmul_rn(__fsqrt_rn(vi), rsqrt_bc2), k.eps);
      const float old = r.param[i];
      const float updated =
          __fsub_rn(old, __fadd_rn(__fmul_rn(step_size, __fdiv_rn(mi, denom)), __fmul_rn(lr_wd, old)));
      r.m[i] = mi;
      r.v[i] = vi;
      r.param[i] = updated;
      if (r.param_copy != nullptr) store_from_float(r.param_copy, r.copy_dtype, i, updated);
    }
  }
}

__global__ void sgd_kernel(const ops::MultiTensorRow* rows, const std::int32_t* chunk_rows, std::int64_t chunks,
                           StepScalars* scalars, MultiSgdArgs a) {
  if (scalars->skip != 0) return;
  const float scale = scalars->grad_scale, mu = a.momentum, lr = a.lr;
  for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const ChunkRange cr = chunk_range(rows, chunk_rows, c);
    const ops::MultiTensorRow& r = *cr.row;
    const float wd = r.decay ? a.weight_decay : 0.0f;
    for (std::int64_t i = cr.begin + threadIdx.x; i < cr.end; i += blockDim.x) {
      const float old = r.param[i];
      const float g = __fadd_rn(__fmul_rn(load_as_float(r.grad, r.grad_dtype, i), scale), __fmul_rn(wd, old));
      float d = g;
      if (mu != 0.0f) {
        d = __fadd_rn(__fmul_rn(mu, r.m[i]), g);
        r.m[i] = d;
      } else if (r.m != nullptr) {
        r.m[i] = g;
      }
      const float updated = __fsub_rn(old, __fmul_rn(lr, d));
      r.param[i] = updated;
      if (r.param_copy != nullptr) store_from_float(r.param_copy, r.copy_dtype, i, updated);
    }
  }
}

}  // namespace

void multi_tensor_step_cuda(const ops::MultiTensorProblem& p) {
  const char* fn = "MultiTensorStep";
  CudaContext& ctx = context(p.device_index, fn);
  const unsigned grid = grid_for(p.chunks);
  switch (p.op) {
    case ops::MultiTensorOp::accumulate:
      accumulate_kernel<<<grid, kThreads, 0, ctx.stream>>>(p.device_rows, p.chunk_rows, p.chunks, p.first, p.loss,
                                                           p.scalars);
      check_launch(fn, "the accumulation kernel");
      return;
    case ops::MultiTensorOp::decide:
      if (p.chunks > 0) {
        norm_partials_kernel<<<grid_for((p.chunks + kNormChunksPerBlock - 1) / kNormChunksPerBlock), kThreads, 0,
                               ctx.stream>>>(p.device_rows, p.chunk_rows, p.chunks, p.partials);
        check_launch(fn, "the gradient norm kernel");
      }
      decide_kernel<<<1, 1, 0, ctx.stream>>>(p.partials, p.chunks, p.scalars, p.rule);
      check_launch(fn, "the step decision kernel");
      return;
    case ops::MultiTensorOp::adamw:
      adamw_kernel<<<grid, kThreads, 0, ctx.stream>>>(p.device_rows, p.chunk_rows, p.chunks, p.scalars,
                                                      p.adamw_scalars);
      check_launch(fn, "the AdamW kernel");
      return;
    case ops::MultiTensorOp::sgd:
      sgd_kernel<<<grid, kThreads, 0, ctx.stream>>>(p.device_rows, p.chunk_rows, p.chunks, p.scalars, p.sgd);
      check_launch(fn, "the SGD kernel");
      return;
  }
}

}  // namespace ampkit::cuda
