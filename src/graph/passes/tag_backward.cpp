// The backward-tagging pass and the tag-copy helper of every rewrite (graph layer): nodes after
// Yield carry attrs.backward; the executor enters a BackwardPassGuard around them, so fp16 GEMMs
// of the backward take the policy's alternate mode. Called by run_passes and tests.
#include "ampkit/graph/passes.hpp"

namespace ampkit::graph {

int tag_backward(Graph& g) {
  const int y = g.yield_index();
  int tagged = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const bool backward = y >= 0 && static_cast<int>(i) > y;
    g.nodes[i].attrs.backward = backward;
    tagged += backward;
  }
  return tagged;
}

void copy_tag_from(Node& node, const Node& like) { node.attrs.backward = like.attrs.backward; }

}  // namespace ampkit::graph
