// Causal multi-head self-attention core, forward and backward (ops layer, public): the part of a
// transformer block between the QKV projection and the output projection. Called by the graph
// executor for the Attention node. fp32 math whatever the operand dtypes (scores, softmax and
// the weighted sum), each output rounded once; results are bitwise independent of the thread
// count. The forward saves the per-row log-sum-exp; the backward recomputes the probabilities.
#pragma once

#include "ampkit/core/tensor.hpp"

namespace ampkit {

/// For every batch b and head h, with d = head_dim and s = 1/sqrt(d) (or `scale` when > 0):
///   S[i, j] = s * q[b, i, h, :] . k[b, j, h, :] for j <= i (causal; j > i is masked out)
///   P = softmax over j of S;  out[b, i, h, :] = sum_j P[i, j] v[b, j, h, :]
///   lse[b, h, i] = log sum_j exp(S[i, j])  (saved for the backward)
/// Operands:
///   q, k, v: [batch, seq, heads * head_dim], f32/bf16/f16 (each chosen independently), last dim
///            contiguous; the seq and batch strides are free, so q, k, v may be column slices of
///            one packed [batch, seq, 3 * heads * head_dim] QKV projection.
///   out:     [batch, seq, heads * head_dim], f32/bf16/f16, last dim contiguous; must not overlap
///            q, k, v or lse.
///   lse:     [batch, heads, seq] f32, contiguous (output).
/// Throws ampkit::Error (nothing written) on a bad shape, dtype, device, overlap, heads < 1 or
/// heads not dividing the last dim.
struct AttentionForwardArgs {
  TensorView q, k, v, out, lse;
  int heads = 1;
  float scale = 0.0f;  // 0: 1/sqrt(head_dim)
};
void attention_forward(const AttentionForwardArgs& args);

/// Gradients of attention_forward: given dout (out's shape) and the forward's q, k, v, out and
/// lse, writes dq, dk, dv (q's, k's and v's shapes; f32/bf16/f16; any may be absent). With
/// `accumulate`, dq/dk/dv += instead of =. The outputs must not overlap any input or each other
/// (except that they may be column slices of one packed dQKV buffer).
/// Throws ampkit::Error (nothing written) like the forward.
struct AttentionBackwardArgs {
  TensorView q, k, v, out, lse, dout;
  TensorView dq, dk, dv;
  int heads = 1;
  float scale = 0.0f;
  bool accumulate = false;
};
void attention_backward(const AttentionBackwardArgs& args);

}  // namespace ampkit
