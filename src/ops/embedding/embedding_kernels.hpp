// The embedding kernel lists (kernels layer, internal): the validated problems the embedding front
// end (src/ops/embedding/) hands to a kernel, the kernels, and one list per direction, best first,
// reference last. Read by the front end and tests/ops/embedding/.
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// Forward: out[t, :] = table[ids[t], :], converted to out's dtype with one rounding.
/// tokens >= 1, dim >= 1; every id in [0, vocab); table and out [.., dim] with their own row
/// strides; out disjoint from ids and table.
struct EmbeddingForwardProblem {
  std::int64_t tokens = 0;
  std::int64_t vocab = 0;
  std::int64_t dim = 0;
  const std::int32_t* ids = nullptr;  // [tokens]
  const void* table = nullptr;        // [vocab, dim]
  DType table_dtype = DType::f32;
  std::int64_t table_row_stride = 0;
  void* out = nullptr;  // [tokens, dim]
  DType out_dtype = DType::f32;
  std::int64_t out_row_stride = 0;
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
};

/// Backward: for every row v hit by some id, s = sum over t with ids[t] == v of dout[t, :]
/// (fp32 from 0, tokens in order); dtable[v, :] = accumulate ? old + s : s (one fp32 add), rounded
/// once to dtable's dtype. Rows hit by no id: set to +0 when !accumulate, not written otherwise.
/// vocab >= 1, dim >= 1, tokens >= 0; every id in [0, vocab); dout [tokens, dim] and dtable
/// [vocab, dim] with their own row strides; dtable disjoint from ids and dout.
struct EmbeddingBackwardProblem {
  std::int64_t tokens = 0;
  std::int64_t vocab = 0;
  std::int64_t dim = 0;
  const std::int32_t* ids = nullptr;  // [tokens]
  const void* dout = nullptr;         // [tokens, dim]
  DType dout_dtype = DType::f32;
  std::int64_t dout_row_stride = 0;
  void* dtable = nullptr;  // [vocab, dim]
  DType dtable_dtype = DType::f32;
  std::int64_t dtable_row_stride = 0;
  bool accumulate = false;
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
};

using EmbeddingForwardFn = void (*)(const EmbeddingForwardProblem&);
using EmbeddingBackwardFn = void (*)(const EmbeddingBackwardProblem&);
using EmbeddingForwardEntry = ops::KernelEntry<EmbeddingForwardProblem, EmbeddingForwardFn>;
using EmbeddingBackwardEntry = ops::KernelEntry<EmbeddingBackwardProblem, EmbeddingBackwardFn>;

}  // namespace ampkit::ops

namespace ampkit::cpu {

/// Columns per tile of the backward: a tile is one hit vocabulary row and up to
/// kEmbeddingColumns consecutive columns, summed in fp32 over its tokens in token order.
/// The split never depends on the thread count.
inline constexpr std::int64_t kEmbeddingColumns = 64;

/// OpenMP over tokens; a row copy (memcpy when the dtypes match), each element rounded once.
void embedding_forward_cpu(const ops::EmbeddingForwardProblem& p);
/// A stable counting sort of the tokens by id (per-thread scratch on the calling thread, grown
/// only when a call needs more; ErrorKind::out_of_memory before anything is written when it
/// cannot grow), then OpenMP over tiles of (hit row, kEmbeddingColumns columns): fp32 sums in
/// token order. No atomics; the bits never depend on the thread count.
void embedding_backward_cpu(const ops::EmbeddingBackwardProblem& p);
/// Double math, one rounding per output.
void embedding_forward_reference(const ops::EmbeddingForwardProblem& p);
void embedding_backward_reference(const ops::EmbeddingBackwardProblem& p);

/// Best first, reference last.
std::span<const ops::EmbeddingForwardEntry> embedding_forward_kernels();
std::span<const ops::EmbeddingBackwardEntry> embedding_backward_kernels();

}  // namespace ampkit::cpu
