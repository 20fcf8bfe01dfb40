// Forward fusion pass (graph layer): Linear -> Gelu becomes one Linear(gelu) whose GEMM applies
// GELU in its epilogue and saves the pre-activation as aux (GELU_AUX_BIAS). Value ids are kept:
// the Gelu's y becomes the Linear's y, the old Linear y becomes the aux, so GeluBackward (which
// reads the pre-activation) needs no change. Called by run_passes and tests.
#include "ampkit/core/error.hpp"
#include "ampkit/graph/passes.hpp"
#include "graph/ops/op_def.hpp"
#include "graph/passes/rewrite.hpp"

namespace ampkit::graph {

int fuse_linear_gelu(Graph& g) {
  int fused = 0;
  std::vector<bool> dead(g.nodes.size(), false);
  for (std::size_t j = 0; j < g.nodes.size(); ++j) {
    const Node& gelu = g.nodes[j];
    if (gelu.op != OpKind::Gelu || gelu.attrs.backward) continue;
    const ValueId pre = gelu.inputs[0];
    const int p = g.producer(pre);
    if (p < 0 || dead[static_cast<std::size_t>(p)]) continue;
    const Node& lin = g.nodes[static_cast<std::size_t>(p)];
    if (lin.op != OpKind::Linear || lin.attrs.gelu || lin.outputs[0] != pre) continue;
    // The forward must read the pre-activation only through this Gelu (backward readers, and
    // Yield, read the aux instead); it must not be a graph output of its own.
    bool only_gelu = true;
    for (int r : readers_except_yield(g, pre))
      if (r != static_cast<int>(j) && !g.nodes[static_cast<std::size_t>(r)].attrs.backward) only_gelu = false;
    if (!only_gelu || is_graph_output(g, pre)) continue;

    Node fusedn = lin;
    fusedn.attrs.gelu = true;
    fusedn.attrs.gelu_variant = gelu.attrs.gelu_variant;
    fusedn.outputs = {gelu.outputs[0], pre};
    const Node saved = lin;
    replace_node(g, p, std::move(fusedn));
    try {
      check_node_signature(g, p);  // y / aux / bias dtypes must fit the epilogue
    } catch (const Error&) {
      g.nodes[static_cast<std::size_t>(p)] = saved;
      continue;
    }
    dead[j] = true;
    ++fused;
  }
  remove_nodes(g, dead);
  return fused;
}

}  // namespace ampkit::graph
