// Causal multi-head self-attention core, forward and backward (ops layer, public): the part of a
// transformer block between the QKV projection and the output projection. Called by the graph
// executor for the Attention node. fp32 math whatever the operand dtypes (scores, softmax and
// the weighted sum), each output rounded once; results are bitwise independent of the thread
// count. The forward saves the per-row log-sum-exp; the backward recomputes the probabilities.
#pragma once

#include <string>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/kernel_info.hpp"

namespace ampkit {

/// For every batch b and head h, with d = head_dim and s = 1/sqrt(d) (or `scale` when > 0):
///   S[i, j] = s * q[b, i, h, :] . k[b, j, h, :] for j <= i (causal; j > i is masked out)
///   P = softmax over j of S;  out[b, i, h, :] = sum_j P[i, j] v[b, j, h, :]
///   lse[b, h, i] = log sum_j exp(S[i, j])  (saved for the backward)
/// Head h is the columns [h * d, (h + 1) * d) of the last dim. The default s is 1/sqrt(d) rounded
/// to f32. docs/ATTENTION.md has the math, the saved state and the numerics.
/// Operands:
///   q, k, v: [batch, seq, heads * head_dim], f32/bf16/f16 (each chosen independently), last dim
///            contiguous; the seq and batch strides are free (>= 0), so q, k, v may be column
///            slices of one packed [batch, seq, 3 * heads * head_dim] QKV projection. Inputs may
///            overlap each other in any way (q, k and v may even be the same view).
///   out:     [batch, seq, heads * head_dim], f32/bf16/f16, last dim contiguous, strides >= 0 with
///            no two elements at one address; its byte range (first to last element) must not
///            overlap the byte range of q, k, v or lse.
///   lse:     [batch, heads, seq] f32, contiguous (output).
///   heads:   >= 1, dividing the last dim, which must be >= 1 (head_dim >= 1).
///   scale:   finite and >= 0; 0 selects 1/sqrt(head_dim).
/// batch or seq 0 is valid and writes nothing.
/// Throws ampkit::Error (nothing written) naming the argument on a bad shape, dtype, device,
/// stride, overlap, heads or scale.
struct AttentionForwardArgs {
  TensorView q, k, v, out, lse;
  int heads = 1;
  float scale = 0.0f;  // 0: 1/sqrt(head_dim)
};
void attention_forward(const AttentionForwardArgs& args);

/// Gradients of attention_forward: given dout (out's shape) and the forward's q, k, v, out and
/// lse, writes dq, dk, dv (q's shape; f32/bf16/f16 each; any may be absent, all absent is a
/// no-op). With `accumulate`, dq/dk/dv += (in fp32, rounded once) instead of =.
/// Inputs (q, k, v, out, dout, lse; f32/bf16/f16 each, lse f32) may overlap each other freely.
/// Outputs: last dim contiguous, strides >= 0, no two elements of one output at one address;
///   - against every input, by byte range: no output may share its range with an input's;
///   - among themselves, exactly: dq, dk, dv may be interleaved column slices of one packed
///     [batch, seq, 3 * heads * head_dim] dQKV buffer (or any views with the same byte strides
///     whose rows never share a byte); outputs with different byte strides must have disjoint
///     byte ranges.
/// Throws ampkit::Error (nothing written) like the forward.
struct AttentionBackwardArgs {
  TensorView q, k, v, out, lse, dout;
  TensorView dq, dk, dv;
  int heads = 1;
  float scale = 0.0f;
  bool accumulate = false;
};
void attention_backward(const AttentionBackwardArgs& args);

/// Empty when the call with `args` would run; otherwise the message it would throw. Never throw.
std::string attention_check(const AttentionForwardArgs& args) noexcept;
std::string attention_check(const AttentionBackwardArgs& args) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string attention_descriptor_check(const AttentionForwardArgs& args) noexcept;
std::string attention_descriptor_check(const AttentionBackwardArgs& args) noexcept;

/// The kernel the call with `args` would use now, e.g. "attention_fwd_cpu". Throws like the call.
const char* attention_kernel_name(const AttentionForwardArgs& args);
const char* attention_kernel_name(const AttentionBackwardArgs& args);

/// Every kernel of the op's list, best first, with the reason it declines the call (empty when
/// it takes it) and the one the call would use marked. Throws like the call.
std::vector<KernelStatus> attention_kernel_statuses(const AttentionForwardArgs& args);
std::vector<KernelStatus> attention_kernel_statuses(const AttentionBackwardArgs& args);

}  // namespace ampkit
