// Reverse-mode automatic differentiation of a forward graph (graph layer, public): appends a
// Yield node (its inputs: the loss and every forward value the backward reads) and the gradient
// nodes, in reverse order of the forward. Gradients of a value read by several nodes are summed
// with Add nodes. The new nodes are not tagged: run tag_backward (passes.hpp) next. Called by
// the trainer and tests.
#pragma once

#include <span>
#include <utility>
#include <vector>

#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

struct GradientMap {
  /// The loss-gradient seed: an f32 [] gradient input the caller fills each run with dL/dloss
  /// (1, or the loss scale of fp16 training).
  ValueId loss_seed = kNoValue;
  /// (value, its gradient) for every parameter and every value of `also_wrt`, in value order;
  /// the gradient is kNoValue when the loss does not depend on the value. Gradients have their
  /// value's dtype and shape.
  std::vector<std::pair<ValueId, ValueId>> gradients;

  /// The gradient of `v`, or kNoValue.
  ValueId of(ValueId v) const;
};

/// Differentiates `loss` (an f32 [] value produced by a forward node of `g`, which must verify
/// and have no Yield) with respect to every parameter and the float values of `also_wrt`
/// (graph inputs, for tests). Appends the gradients to g.outputs (and the loss, when absent).
/// Throws ampkit::Error naming the node whose gradient cannot be formed (a GELU Linear without
/// aux, a LayerNorm without mean/rstd outputs, ...).
GradientMap build_backward(Graph& g, ValueId loss, std::span<const ValueId> also_wrt = {});

}  // namespace ampkit::graph
