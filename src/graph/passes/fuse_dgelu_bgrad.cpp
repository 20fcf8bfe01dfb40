// Backward fusion pass (graph layer): the GELU gradient and the bias gradient of a layer below
// move into the dX GEMM of the layer above (LinearBackwardArgs::below_gelu / below_db, epilogue
// DGELU_BGRAD):
//   U: LinearBackward(dy, h, W2) -> dh;  G: GeluBackward(pre, dh) -> dpre;
//   D: LinearBackward(dpre, x, W1) -> (dx, dW1, db1)
// becomes U: LinearBackward(dy, h, W2, below_aux=pre) below_gelu -> (dpre, .., below_db=db1) and
// D: -> (dx, dW1). G is removed. Called by run_passes and tests.
#include "ampkit/core/error.hpp"
#include "ampkit/graph/passes.hpp"
#include "graph/ops/op_def.hpp"
#include "graph/passes/rewrite.hpp"

namespace ampkit::graph {

int fuse_dgelu_bgrad(Graph& g) {
  int fused = 0;
  std::vector<bool> dead(g.nodes.size(), false);
  for (std::size_t j = 0; j < g.nodes.size(); ++j) {
    const Node& gb = g.nodes[j];
    if (gb.op != OpKind::GeluBackward) continue;
    const ValueId pre = gb.inputs[0], dh = gb.inputs[1], dpre = gb.outputs[0];
    const int u = g.producer(dh);
    if (u < 0 || dead[static_cast<std::size_t>(u)]) continue;
    const Node& up = g.nodes[static_cast<std::size_t>(u)];
    if (up.op != OpKind::LinearBackward || up.attrs.below_gelu || up.outputs[0] != dh) continue;
    if (g.consumers(dh).size() != 1 || is_graph_output(g, dh)) continue;

    Node fusedn = up;
    fusedn.attrs.below_gelu = true;
    fusedn.attrs.gelu_variant = gb.attrs.gelu_variant;
    fusedn.inputs[3] = pre;
    fusedn.outputs[0] = dpre;
    // The bias gradient of the layer below, when its LinearBackward reads dpre as dy and
    // still computes something else.
    int d = -1;
    for (int r : g.consumers(dpre)) {
      const Node& n = g.nodes[static_cast<std::size_t>(r)];
      if (n.op == OpKind::LinearBackward && n.inputs[0] == dpre && n.outputs[2] != kNoValue &&
          (n.outputs[0] != kNoValue || n.outputs[1] != kNoValue)) {
        d = r;
        break;
      }
    }
    if (d >= 0) fusedn.outputs[3] = g.nodes[static_cast<std::size_t>(d)].outputs[2];

    const Node saved_up = up;
    replace_node(g, u, std::move(fusedn));
    Node saved_down;
    if (d >= 0) {
      saved_down = g.nodes[static_cast<std::size_t>(d)];
      Node down = saved_down;
      down.outputs[2] = kNoValue;
      replace_node(g, d, std::move(down));
    }
    try {
      check_node_signature(g, u);  // below_aux / below_db dtypes must fit the epilogue
    } catch (const Error&) {
      g.nodes[static_cast<std::size_t>(u)] = saved_up;
      if (d >= 0) g.nodes[static_cast<std::size_t>(d)] = saved_down;
      continue;
    }
    dead[j] = true;
    ++fused;
  }
  remove_nodes(g, dead);
  return fused;
}

}  // namespace ampkit::graph
