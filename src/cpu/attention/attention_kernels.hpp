// The causal attention kernels (kernels layer, internal): the fp32 CPU kernels and the double
// references that the lists of attention_kernel_list.cpp hold (best first, reference last), and
// the unrounded reference forward the tests take finite differences of. Problems come validated
// from src/ops/attention/attention_validate.cpp.
#pragma once

#include <cstdint>

#include "ops/attention/attention_problem.hpp"

namespace ampkit::cpu {

/// Query rows per forward task: the forward is split over (batch, head, block of kAttentionRowBlock
/// query rows); every row is computed the same way whatever the split.
inline constexpr std::int64_t kAttentionRowBlock = 32;

/// fp32 math: scores s * (q . k) as sums over head_dim in index order, max-subtracted softmax with
/// gemm_math::exp_f32, fixed 8-lane partial sums; OpenMP over (batch, head[, row block]); each
/// output written once (rounded once from fp32), bitwise independent of the thread count.
void attention_forward_cpu(const ops::AttentionForwardProblem& p);
/// Recomputes P = exp(S - lse) and accumulates dK, dV over query rows in row order, each (batch,
/// head) owned by one thread (no atomics).
void attention_backward_cpu(const ops::AttentionBackwardProblem& p);

/// The same math with vector register tiles (attention_forward_impl.hpp,
/// attention_backward_impl.hpp): AVX-512 (16 lanes) and AVX2 (8 lanes). Sums in fixed orders of
/// their own (lane partials of the vector width), so the bits differ from attention_forward_cpu's
/// and between the two widths; bitwise independent of the thread count.
void attention_forward_avx512(const ops::AttentionForwardProblem& p);
void attention_backward_avx512(const ops::AttentionBackwardProblem& p);
void attention_forward_avx2(const ops::AttentionForwardProblem& p);
void attention_backward_avx2(const ops::AttentionBackwardProblem& p);

/// y[i] = the vector kernels' exp(x[i]) (Avx512Ops::exp / Avx2Ops::exp, src/cpu/simd/), for the
/// tests of its accuracy.
void attention_exp_avx512(const float* x, float* y, std::int64_t n);
void attention_exp_avx2(const float* x, float* y, std::int64_t n);

/// Plain loops in double, one rounding per output (lse rounded to f32 once).
void attention_forward_reference(const ops::AttentionForwardProblem& p);
void attention_backward_reference(const ops::AttentionBackwardProblem& p);

/// The forward in double without rounding: out [batch, seq, heads * head_dim] and lse [batch,
/// heads, seq], both contiguous (p.out and p.lse are not touched). Throws Error(out_of_memory)
/// when its scratch cannot be allocated.
void attention_forward_reference_double(const ops::AttentionForwardProblem& p, double* out, double* lse);

/// Scratch of `threads` slices of `floats_per_thread` floats each (64-byte aligned slices),
/// allocated on the calling thread before any parallel region, grown only when a call needs more
/// than any earlier one on the thread. Throws Error(out_of_memory) when it cannot be allocated,
/// before the kernel writes anything.
float* attention_scratch(std::int64_t floats_per_thread, int threads, const char* fn);

/// n rounded up to a multiple of 16 floats (one cache line).
static inline std::int64_t attention_pad(std::int64_t n) { return (n + 15) / 16 * 16; }

/// Carves a thread's scratch slice: each take(n) is the next n floats, the slice advancing by n
/// rounded up to a cache line. With a null base it only counts (take returns null), so a *Slices
/// struct derives its size from the same carving: floats() = the count of a null-based carve.
struct ScratchCarver {
  float* base = nullptr;
  std::int64_t used = 0;  // floats taken so far
  float* take(std::int64_t n) {
    float* x = base != nullptr ? base + used : nullptr;
    used += attention_pad(n);
    return x;
  }
};

}  // namespace ampkit::cpu
