// Embedding forward and backward on CUDA (CUDA layer). Forward: one thread an output element,
// out[t, :] = table[ids[t], :] rounded once to out's dtype. Backward, deterministic without
// atomics: the tokens are grouped by id on the host (a stable counting sort of a copy of the ids,
// so each row's tokens stay in token order), the groups go to the device, and one block takes a
// vocabulary row: each thread sums its columns over the row's tokens in token order in fp32 from
// 0, then writes s (or old + s when accumulating, one fp32 add), rounded once; rows no id hits get
// +0 (not written when accumulating). The CPU kernels sum in the same order, so the two agree to
// the bit for f32 outputs. Entries of embedding_cuda_kernel_list.cpp.
#include <cstdint>
#include <new>
#include <vector>

#include "ampkit/core/error.hpp"
#include "cuda/common/element_cuda.cuh"
#include "cuda/common/grid_cuda.cuh"
#include "cuda/embedding/embedding_cuda.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"

namespace ampkit::cuda {
namespace {

constexpr int kRowThreads = 128;

__global__ void embedding_fwd_kernel(ops::EmbeddingForwardProblem p) {
  const std::int64_t total = p.tokens * p.dim;
  for (std::int64_t e = flat_index(); e < total; e += flat_stride()) {
    const std::int64_t t = e / p.dim, c = e - t * p.dim;
    const std::int64_t row = p.ids[t];
    store_from_float(p.out, p.out_dtype, t * p.out_row_stride + c,
                     load_as_float(p.table, p.table_dtype, row * p.table_row_stride + c));
  }
}

// start[v] .. start[v + 1]: the positions in `order` of the tokens with id v, in token order.
__global__ void __launch_bounds__(kRowThreads)
    embedding_bwd_kernel(ops::EmbeddingBackwardProblem p, const std::int64_t* start, const std::int64_t* order) {
  for (std::int64_t v = blockIdx.x; v < p.vocab; v += gridDim.x) {
    const std::int64_t first = start[v], last = start[v + 1];
    for (std::int64_t c = threadIdx.x; c < p.dim; c += kRowThreads) {
      const std::int64_t at = v * p.dtable_row_stride + c;
      if (first == last) {
        if (!p.accumulate) store_from_float(p.dtable, p.dtable_dtype, at, 0.0f);
        continue;
      }
      float s = 0.0f;
      for (std::int64_t k = first; k < last; ++k)
        s += load_as_float(p.dout, p.dout_dtype, order[k] * p.dout_row_stride + c);
      if (p.accumulate) s = load_as_float(p.dtable, p.dtable_dtype, at) + s;
      store_from_float(p.dtable, p.dtable_dtype, at, s);
    }
  }
}

}  // namespace

void embedding_forward_cuda(const ops::EmbeddingForwardProblem& p) {
  const char* fn = "embedding_forward";
  if (p.tokens == 0 || p.dim == 0) return;
  CudaContext& ctx = context(p.device_index, fn);
  embedding_fwd_kernel<<<flat_blocks(p.tokens * p.dim), kFlatThreads, 0, ctx.stream>>>(p);
  check_launch(fn, "the forward kernel");
}

void embedding_backward_cuda(const ops::EmbeddingBackwardProblem& p) {
  const char* fn = "embedding_backward";
  if (p.vocab == 0 || p.dim == 0) return;
  CudaContext& ctx = context(p.device_index, fn);
  // The groups on the host: [start (vocab + 1) | order (tokens)] in one buffer, one upload.
  thread_local std::vector<std::int32_t> ids;
  thread_local std::vector<std::int64_t> groups;
  const auto tokens = static_cast<std::size_t>(p.tokens), vocab = static_cast<std::size_t>(p.vocab);
  try {
    ids.resize(tokens);
    groups.assign(vocab + 1 + tokens, 0);
  } catch (const std::bad_alloc&) {
    fail_with(ErrorKind::out_of_memory, fn, "could not allocate the token groups of ", p.tokens, " tokens and ",
              p.vocab, " rows");
  }
  if (tokens > 0) {
    check_cuda(cudaMemcpyAsync(ids.data(), p.ids, tokens * sizeof(std::int32_t), cudaMemcpyDeviceToHost, ctx.stream),
               fn, "cudaMemcpyAsync(ids)");
    check_cuda(cudaStreamSynchronize(ctx.stream), fn, "cudaStreamSynchronize");
  }
  std::int64_t* start = groups.data();
  std::int64_t* order = groups.data() + vocab + 1;
  for (std::size_t t = 0; t < tokens; ++t) start[ids[t] + 1] += 1;  // ids were range-checked
  for (std::size_t v = 0; v < vocab; ++v) start[v + 1] += start[v];
  {
    std::vector<std::int64_t> next(start, start + vocab);
    for (std::size_t t = 0; t < tokens; ++t)
      order[next[static_cast<std::size_t>(ids[t])]++] = static_cast<std::int64_t>(t);
  }
  const std::size_t bytes = groups.size() * sizeof(std::int64_t);
  auto* device_groups = static_cast<std::int64_t*>(workspace(ctx, bytes, fn));
  check_cuda(cudaMemcpyAsync(device_groups, groups.data(), bytes, cudaMemcpyHostToDevice, ctx.stream), fn,
             "cudaMemcpyAsync(groups)");
  // The host buffer is reused by the next call: wait until the copy has read it.
  check_cuda(cudaStreamSynchronize(ctx.stream), fn, "cudaStreamSynchronize");
  embedding_bwd_kernel<<<row_blocks(p.vocab), kRowThreads, 0, ctx.stream>>>(p, device_groups,
                                                                            device_groups + vocab + 1);
  check_launch(fn, "the backward kernel");
}

}  // namespace ampkit::cuda
