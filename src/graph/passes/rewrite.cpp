// Rewrite helpers shared by the passes (graph layer): see rewrite.hpp.
#include "graph/passes/rewrite.hpp"

#include <algorithm>
#include <utility>

#include "ampkit/graph/passes.hpp"

namespace ampkit::graph {

void replace_node(Graph& g, int i, Node replacement) {
  Node& old = g.nodes[static_cast<std::size_t>(i)];
  copy_tag_from(replacement, old);
  old = std::move(replacement);
}

void remove_nodes(Graph& g, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

std::vector<int> readers_except_yield(const Graph& g, ValueId v) {
  std::vector<int> out;
  for (int i : g.consumers(v))
    if (g.nodes[static_cast<std::size_t>(i)].op != OpKind::Yield) out.push_back(i);
  return out;
}

bool is_graph_output(const Graph& g, ValueId v) {
  return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
}

}  // namespace ampkit::graph
