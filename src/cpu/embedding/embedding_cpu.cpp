// The embedding kernels (kernels layer).
//   forward: OpenMP over tokens; row t of out is row ids[t] of the table, copied (memcpy when the
//   dtypes match) or widened exactly to fp32 and rounded once to out's dtype.
//   backward: a stable counting sort of the tokens by id on the calling thread (offsets per row,
//   token indices in order, the list of hit rows; per-thread scratch grown only when a call needs
//   more), then (accumulate = false) OpenMP over the rows no id hits, set to +0, then OpenMP over
//   tiles of one hit row and kEmbeddingColumns columns: fp32 sums from 0 over the row's tokens in
//   token order, plus the old value when accumulating, one rounding at the store. Every sum has a
//   fixed order and every tile one owner: no atomics, and the bits never depend on the thread
//   count. Called through the lists of embedding_kernel_list.cpp by the front end.
#include <algorithm>
#include <cstring>
#include <new>

#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "core/checked_math.hpp"
#include "core/workspace.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "cpu/embedding/embedding_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kParallelMinElements = 1 << 14;

template <DType T, DType O>
void forward_typed(const ops::EmbeddingForwardProblem& p) {
  const bool parallel = p.tokens > 1 && p.tokens * p.dim >= kParallelMinElements;
  const std::size_t row_bytes = static_cast<std::size_t>(p.dim) * dtype_size(O);
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (parallel)
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    const void* src = row_address(p.table, T, p.table_row_stride, p.ids[t]);
    void* dst = row_address(p.out, O, p.out_row_stride, t);
    if constexpr (T == O) {
      std::memcpy(dst, src, row_bytes);
    } else {
      for (std::int64_t j = 0; j < p.dim; ++j) store_as<O>(dst, j, load_as<T>(src, j));
    }
  }
}

// The calling thread's int64 scratch, its slot of the thread's workspace (core/workspace.hpp):
// grows only when a call needs more than any earlier one, so a training loop allocates only
// while it warms up.
std::int64_t* backward_scratch(std::int64_t count) {
  const auto bytes = checked_mul(count, std::int64_t{8});
  void* p = bytes ? workspace(WorkspaceSlot::embedding, static_cast<std::size_t>(*bytes)) : nullptr;
  if (p == nullptr && count > 0)
    fail_with(ErrorKind::out_of_memory, "embedding_backward", "could not allocate ", count,
              " int64 of scratch for the token order");
  return static_cast<std::int64_t*>(p);
}

// Token order by id, stable: the tokens of row v are order[offsets[v] .. offsets[v + 1]), in
// increasing t; hit[0 .. hits) lists the rows with at least one token, ascending.
struct TokenOrder {
  const std::int64_t* offsets = nullptr;
  const std::int64_t* order = nullptr;
  const std::int64_t* hit = nullptr;
  std::int64_t hits = 0;
};

TokenOrder sort_tokens(const ops::EmbeddingBackwardProblem& p) {
  const std::int64_t max_hits = std::min(p.tokens, p.vocab);
  const auto count = checked_add(p.vocab + 1, p.tokens + max_hits);  // vocab, tokens < 2^62
  std::int64_t* offsets = backward_scratch(*count);
  std::int64_t* order = offsets + p.vocab + 1;
  std::int64_t* hit = order + p.tokens;
  std::fill(offsets, offsets + p.vocab + 1, std::int64_t{0});
  for (std::int64_t t = 0; t < p.tokens; ++t) ++offsets[p.ids[t] + 1];
  for (std::int64_t v = 0; v < p.vocab; ++v) offsets[v + 1] += offsets[v];
  // offsets[v] is row v's start; placing advances it to row v's end (= row v + 1's start).
  for (std::int64_t t = 0; t < p.tokens; ++t) order[offsets[p.ids[t]]++] = t;
  for (std::int64_t v = p.vocab; v > 0; --v) offsets[v] = offsets[v - 1];
  offsets[0] = 0;
  std::int64_t hits = 0;
  for (std::int64_t v = 0; v < p.vocab; ++v)
    if (offsets[v + 1] > offsets[v]) hit[hits++] = v;
  return {offsets, order, hit, hits};
}

template <DType G, DType D>
void backward_typed(const ops::EmbeddingBackwardProblem& p, const TokenOrder& o) {
  const bool parallel = (p.tokens + p.vocab) * p.dim >= kParallelMinElements;
  if (!p.accumulate) {
    const std::size_t row_bytes = static_cast<std::size_t>(p.dim) * dtype_size(D);
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (parallel)
    for (std::int64_t v = 0; v < p.vocab; ++v)
      if (o.offsets[v + 1] == o.offsets[v])
        std::memset(row_address(p.dtable, D, p.dtable_row_stride, v), 0, row_bytes);  // +0
  }
  const std::int64_t chunks = (p.dim + kEmbeddingColumns - 1) / kEmbeddingColumns;
  const std::int64_t tiles = o.hits * chunks;
#pragma omp parallel for schedule(dynamic, 4) num_threads(ampkit::num_threads()) if (parallel && tiles > 1)
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    const std::int64_t v = o.hit[tile / chunks];
    const std::int64_t j0 = (tile % chunks) * kEmbeddingColumns;
    const std::int64_t width = std::min(kEmbeddingColumns, p.dim - j0);
    float sum[kEmbeddingColumns] = {};
    for (std::int64_t k = o.offsets[v]; k < o.offsets[v + 1]; ++k) {
      const void* g = row_address(p.dout, G, p.dout_row_stride, o.order[k]);
      for (std::int64_t j = 0; j < width; ++j) sum[j] += load_as<G>(g, j0 + j);
    }
    void* dst = row_address(p.dtable, D, p.dtable_row_stride, v);
    if (p.accumulate) {
      for (std::int64_t j = 0; j < width; ++j) store_as<D>(dst, j0 + j, load_as<D>(dst, j0 + j) + sum[j]);
    } else {
      for (std::int64_t j = 0; j < width; ++j) store_as<D>(dst, j0 + j, sum[j]);
    }
  }
}

}  // namespace

void embedding_forward_cpu(const ops::EmbeddingForwardProblem& p) {
  visit_dtype(p.table_dtype, [&]<DType T>() { visit_dtype(p.out_dtype, [&]<DType O>() { forward_typed<T, O>(p); }); });
}

void embedding_backward_cpu(const ops::EmbeddingBackwardProblem& p) {
  const TokenOrder order = sort_tokens(p);  // may throw out_of_memory; nothing written yet
  visit_dtype(p.dout_dtype,
              [&]<DType G>() { visit_dtype(p.dtable_dtype, [&]<DType D>() { backward_typed<G, D>(p, order); }); });
}

}  // namespace ampkit::cpu
