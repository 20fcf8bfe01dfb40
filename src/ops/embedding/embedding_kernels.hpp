// The embedding problems (ops layer, internal): the validated problems the embedding front end
// (src/ops/embedding/) hands to a kernel, and the entry types of their kernel lists (the CPU's in
// src/cpu/embedding/embedding_kernels.hpp, CUDA's in src/cuda/embedding/).
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
