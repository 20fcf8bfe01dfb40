// The embedding kernels of the CPU backend (kernels layer, internal): the kernel entry points of
// every ISA and the kernel lists, best first, reference last, over the neutral problem of
// src/ops/embedding/embedding_kernels.hpp. Defined in src/cpu/embedding/; the CPU backend
// (src/cpu/common/cpu_backend.cpp) puts the lists in its row of the op table; the tests run each
// entry. Mirrors src/cuda/<op>/*_cuda.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "ops/embedding/embedding_kernels.hpp"

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
