// Rewrite helpers shared by the passes (graph layer, internal): replacing a node keeps the
// replaced node's backward tag (copy_tag_from), removing nodes keeps the order of the rest.
// Every pass creates or changes nodes only through these, so the tag survives by construction.
#pragma once

#include <vector>

#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

/// Puts `replacement` at index i, with node i's backward tag.
void replace_node(Graph& g, int i, Node replacement);

/// Removes the nodes i with dead[i], keeping the order of the others.
void remove_nodes(Graph& g, const std::vector<bool>& dead);

/// The nodes that read v, except Yield (Yield only keeps forward values for the backward).
std::vector<int> readers_except_yield(const Graph& g, ValueId v);

/// True when v is listed in g.outputs.
bool is_graph_output(const Graph& g, ValueId v);

}  // namespace ampkit::graph
