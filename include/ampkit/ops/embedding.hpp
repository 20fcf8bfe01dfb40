// Token embedding lookup and its gradient (ops layer, public). Called by the graph executor for
// the Embedding node (and its backward); the kernels live in src/cpu/embedding/. Results are
// bitwise independent of the thread count: the backward is a scatter-add that visits the tokens
// in order for every column.
#pragma once

#include <string>

#include "ampkit/core/tensor.hpp"

namespace ampkit {

/// out[t, :] = table[ids[t], :] (converted to out's dtype, rounded once; copied bit for bit when
/// the dtypes match).
///   ids:   [tokens] i32, contiguous, each in [0, vocab)
///   table: [vocab, dim] f32/bf16/f16, last dim contiguous (row stride allowed)
///   out:   [tokens, dim] f32/bf16/f16, last dim contiguous (row stride allowed); must not
///          overlap ids or table
/// tokens = 0 or dim = 0 writes nothing. Throws ampkit::Error (nothing written) on a bad shape,
/// dtype, device (kind unsupported), layout, overlap or an id out of range (the message names the
/// position and the value: "ids[3] = 9 is out of range [0, 5)").
void embedding_forward(const TensorView& ids, const TensorView& table, const TensorView& out);

/// dtable[v, :] (+)= sum over t with ids[t] == v of dout[t, :], in fp32, tokens in order, rounded
/// once. Per element of a row v hit by some id: s = fp32 sum from 0 of the tokens' values in
/// token order; dtable = accumulate ? old + s (one more fp32 add) : s, rounded once to dtable's
/// dtype. Rows not hit by any id: accumulate = false sets them to +0; true leaves them untouched
/// (not written). Deterministic: no atomics, the bits never depend on the thread count.
/// Under the reference kernels (set_reference_kernels, e.g. `ampkit check kernels`) the reference
/// entry sums the tokens of a row in double instead and rounds once (old + s included): within
/// (c + 1) u32 sum|dout| of this fp32 order (error_bounds::embedding_backward), not bit for bit.
///   ids:    [tokens] i32, contiguous, each in [0, vocab)
///   dout:   [tokens, dim] f32/bf16/f16, last dim contiguous (row stride allowed)
///   dtable: [vocab, dim] f32/bf16/f16, last dim contiguous (row stride allowed); must not
///           overlap ids or dout
/// Uses per-thread scratch of the calling thread (about vocab + 2 tokens int64), grown only when a call
/// needs more than an earlier one (ErrorKind::out_of_memory, nothing written, when it cannot).
/// Throws ampkit::Error (nothing written) like embedding_forward.
void embedding_backward(const TensorView& ids, const TensorView& dout, const TensorView& dtable, bool accumulate);

/// Empty when the call would run; otherwise the message it would throw (the ids are read).
/// Never throw.
std::string embedding_forward_check(const TensorView& ids, const TensorView& table, const TensorView& out) noexcept;
std::string embedding_backward_check(const TensorView& ids, const TensorView& dout, const TensorView& dtable,
                                     bool accumulate) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string embedding_forward_descriptor_check(const TensorView& ids, const TensorView& table,
                                               const TensorView& out) noexcept;
std::string embedding_backward_descriptor_check(const TensorView& ids, const TensorView& dout, const TensorView& dtable,
                                                bool accumulate) noexcept;

/// The kernel the call would use now, e.g. "embedding_fwd_cpu". Throw like the call.
const char* embedding_forward_kernel_name(const TensorView& ids, const TensorView& table, const TensorView& out);
const char* embedding_backward_kernel_name(const TensorView& ids, const TensorView& dout, const TensorView& dtable,
                                           bool accumulate);

}  // namespace ampkit
