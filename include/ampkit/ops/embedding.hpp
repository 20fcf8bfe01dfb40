// Token embedding lookup and its gradient (ops layer, public). Called by the graph executor for
// the Embedding node (and its backward); the kernels live in src/cpu/embedding/. Results are
// bitwise independent of the thread count: the backward is a scatter-add that visits the tokens
// in order for every column.
#pragma once

#include "ampkit/core/tensor.hpp"

namespace ampkit {

/// out[t, :] = table[ids[t], :] (converted to out's dtype, rounded once).
///   ids:   [tokens] i32, each in [0, vocab)
///   table: [vocab, dim] f32/bf16/f16, last dim contiguous (row stride allowed)
///   out:   [tokens, dim] f32/bf16/f16, last dim contiguous; must not overlap ids or table
/// Throws ampkit::Error (nothing written) on a bad shape, dtype, device, overlap or an id out of
/// range (the message names the position and the value).
void embedding_forward(const TensorView& ids, const TensorView& table, const TensorView& out);

/// dtable[v, :] (+)= sum over t with ids[t] == v of dout[t, :], in fp32, tokens in order, rounded
/// once. accumulate = false: rows not hit by any id are set to 0; true: they are kept.
///   ids:    [tokens] i32, each in [0, vocab)
///   dout:   [tokens, dim] f32/bf16/f16
///   dtable: [vocab, dim] f32/bf16/f16; must not overlap ids or dout
/// Throws ampkit::Error (nothing written) like embedding_forward.
void embedding_backward(const TensorView& ids, const TensorView& dout, const TensorView& dtable,
                        bool accumulate);

}  // namespace ampkit
