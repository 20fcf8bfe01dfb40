// The graph verifier (graph layer, public): structure (each value produced once, inputs defined
// before use, hence no cycles), every node's slots, dtypes, shapes and attributes, and the
// backward-tag invariant. Run by the builder, autodiff and after every pass; errors are
// ampkit::Error naming the node ("graph: node 7 (Linear 'h0.fc1'): ...").
#pragma once

#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

struct VerifyOptions {
  /// Also check the tag invariant (verify_tags) when the graph has a Yield node. Off only for
  /// the moment between autodiff and tag_backward.
  bool tags = true;
};

/// Throws ampkit::Error naming the first offending node (index, op, name) or value:
/// a value produced twice, an input read before it is defined, a graph input / parameter
/// produced by a node, a wrong slot count, a missing required operand, a dtype or shape that
/// does not fit the op, an invalid attribute, more than one Yield, a gradient seed that is not
/// a gradient; then verify_tags when options.tags.
void verify(const Graph& g, const VerifyOptions& options = {});

/// The tag invariant: exactly the nodes after Yield carry attrs.backward (no tagged node
/// precedes Yield, Yield itself untagged, no untagged node after it), and no untagged node reads
/// a gradient value. A graph without Yield must have no tagged node. Throws ampkit::Error.
void verify_tags(const Graph& g);

}  // namespace ampkit::graph
