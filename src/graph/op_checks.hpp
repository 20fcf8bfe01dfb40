// Per-op signature checks of the graph verifier (graph layer, internal): called by verify.cpp
// once the node's slot counts and the definedness of its operands are known to be right.
#pragma once

#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

/// Checks the required slots, dtypes, shapes and attributes of node `index` for its op.
/// Throws ampkit::Error "graph: node i (Op 'name'): ...".
void check_node_signature(const Graph& g, int index);

}  // namespace ampkit::graph
