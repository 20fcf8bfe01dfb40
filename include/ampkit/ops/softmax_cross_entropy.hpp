// Softmax cross-entropy loss fused with its log-sum-exp, forward and backward (ops layer,
// public). Called by the graph executor for the loss node. fp32 math whatever the logits dtype;
// per-row sums in a fixed order and the mean over rows in fp64 in row order, so the loss does not
// depend on the thread count.
#pragma once

#include <string>

#include "ampkit/core/tensor.hpp"

namespace ampkit {

/// loss = mean over rows of (lse[r] - logits[r, targets[r]]), lse[r] = log sum_j exp(logits[r, j]).
///   logits:  [rows, classes] f32/bf16/f16, last dim contiguous, rows >= 1, classes >= 1
///   targets: [rows] i32, each in [0, classes)
///   loss:    [] or [1] f32 (output)
///   lse:     [rows] f32 (output, saved for the backward)
/// Throws ampkit::Error (nothing written) on a bad shape, dtype, device, overlap or a target out
/// of range (the message names the row and the value).
void softmax_cross_entropy_forward(const TensorView& logits, const TensorView& targets, const TensorView& loss,
                                   const TensorView& lse);

/// dlogits[r, j] = dloss / rows * (exp(logits[r, j] - lse[r]) - [j == targets[r]]).
///   logits, targets, lse: as in the forward; dloss: the gradient of the mean loss (finite)
///   dlogits: [rows, classes] f32/bf16/f16; may alias logits exactly (in place)
/// Throws ampkit::Error (nothing written) like the forward.
void softmax_cross_entropy_backward(const TensorView& logits, const TensorView& targets, const TensorView& lse,
                                    float dloss, const TensorView& dlogits);

/// Empty when the call would run; otherwise the message it would throw (the targets are read).
/// Never throw.
std::string softmax_cross_entropy_forward_check(const TensorView& logits, const TensorView& targets,
                                                const TensorView& loss, const TensorView& lse) noexcept;
std::string softmax_cross_entropy_backward_check(const TensorView& logits, const TensorView& targets,
                                                 const TensorView& lse, float dloss,
                                                 const TensorView& dlogits) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string softmax_cross_entropy_forward_descriptor_check(const TensorView& logits, const TensorView& targets,
                                                           const TensorView& loss, const TensorView& lse) noexcept;
std::string softmax_cross_entropy_backward_descriptor_check(const TensorView& logits, const TensorView& targets,
                                                            const TensorView& lse, float dloss,
                                                            const TensorView& dlogits) noexcept;

/// The kernel the call would use now, e.g. "softmax_cross_entropy_fwd_cpu". Throw like the call.
const char* softmax_cross_entropy_forward_kernel_name(const TensorView& logits, const TensorView& targets,
                                                      const TensorView& loss, const TensorView& lse);
const char* softmax_cross_entropy_backward_kernel_name(const TensorView& logits, const TensorView& targets,
                                                       const TensorView& lse, float dloss, const TensorView& dlogits);

}  // namespace ampkit
