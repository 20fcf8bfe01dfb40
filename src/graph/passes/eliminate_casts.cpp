// Cast elimination in the backward (graph layer): the Cast that autocast's compute copies need
// on their way back (bf16 dW -> f32 master gradient) disappears when the producer can write the
// f32 gradient itself: LinearBackward's dw / db and EmbeddingBackward's dtable take any float
// dtype, so the fp32 accumulator is rounded once, to f32. Called by run_passes and tests.
#include "ampkit/core/error.hpp"
#include "ampkit/graph/passes.hpp"
#include "graph/ops/op_def.hpp"
#include "graph/passes/rewrite.hpp"

namespace ampkit::graph {

int eliminate_casts(Graph& g) {
  int removed = 0;
  std::vector<bool> dead(g.nodes.size(), false);
  for (std::size_t j = 0; j < g.nodes.size(); ++j) {
    const Node& cast = g.nodes[j];
    if (cast.op != OpKind::Cast || !cast.attrs.backward) continue;
    const ValueId x = cast.inputs[0], y = cast.outputs[0];
    const int p = g.producer(x);
    if (p < 0 || dead[static_cast<std::size_t>(p)]) continue;
    if (g.consumers(x).size() != 1 || is_graph_output(g, x)) continue;
    const Node& prod = g.nodes[static_cast<std::size_t>(p)];
    int slot = -1;
    if (prod.op == OpKind::LinearBackward) {
      if (prod.outputs[1] == x)
        slot = 1;
      else if (prod.outputs[2] == x)
        slot = 2;
    } else if (prod.op == OpKind::EmbeddingBackward && prod.outputs[0] == x) {
      slot = 0;
    }
    if (slot < 0) continue;
    const Node saved = prod;
    Node changed = prod;
    changed.outputs[static_cast<std::size_t>(slot)] = y;
    replace_node(g, p, std::move(changed));
    try {
      check_node_signature(g, p);  // e.g. db must stay dw's dtype or f32
    } catch (const Error&) {
      g.nodes[static_cast<std::size_t>(p)] = saved;
      continue;
    }
    dead[j] = true;
    ++removed;
  }
  remove_nodes(g, dead);
  return removed;
}

}  // namespace ampkit::graph
