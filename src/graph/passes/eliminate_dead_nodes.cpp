// Dead-node elimination (graph layer): nodes none of whose outputs reach a graph output (the
// loss, the parameter gradients, logits) through live nodes are removed, and Yield stops
// keeping their values. A forward branch the loss never reads (a probe, a metric head), say, costs
// nothing at run time. Called by run_passes and tests.
#include <algorithm>
#include <set>

#include "ampkit/graph/passes.hpp"
#include "graph/passes/rewrite.hpp"

namespace ampkit::graph {

int eliminate_dead_nodes(Graph& g) {
  // Backwards: a value is needed when it is a graph output or a live node reads it; Yield only
  // carries values across and never makes them needed by itself.
  std::set<ValueId> needed(g.outputs.begin(), g.outputs.end());
  std::vector<bool> dead(g.nodes.size(), false);
  int removed = 0;
  for (std::size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    if (n.op == OpKind::Yield) continue;
    const bool live = std::any_of(n.outputs.begin(), n.outputs.end(),
                                  [&](ValueId v) { return v != kNoValue && needed.count(v) > 0; });
    if (!live) {
      dead[i] = true;
      ++removed;
      continue;
    }
    for (ValueId v : n.inputs)
      if (v != kNoValue) needed.insert(v);
  }
  if (removed == 0) return 0;
  const int y = g.yield_index();
  if (y >= 0) {
    // Yield keeps only values that survive: those of removed producers go with them.
    std::vector<ValueId>& kept = g.nodes[static_cast<std::size_t>(y)].inputs;
    std::erase_if(kept, [&](ValueId v) {
      const int p = g.producer(v);
      return p >= 0 && dead[static_cast<std::size_t>(p)];
    });
  }
  remove_nodes(g, dead);
  return removed;
}

}  // namespace ampkit::graph
