// The pass pipeline of a training graph (graph layer): tag, fuse, eliminate casts and dead
// nodes, verifying the whole graph (tag invariant included) after every pass. Called by the
// trainer and tests.
#include <set>

#include "ampkit/graph/passes.hpp"
#include "ampkit/graph/verify.hpp"

namespace ampkit::graph {
namespace {

// After the rewrites, Yield keeps only what the backward still reads (and graph outputs such as
// the loss), so the planner frees the rest at the end of the forward.
void refresh_yield(Graph& g) {
  const int y = g.yield_index();
  if (y < 0) return;
  std::set<ValueId> read(g.outputs.begin(), g.outputs.end());
  for (std::size_t i = static_cast<std::size_t>(y) + 1; i < g.nodes.size(); ++i)
    read.insert(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end());
  std::vector<ValueId>& in = g.nodes[static_cast<std::size_t>(y)].inputs;
  std::erase_if(in, [&](ValueId v) { return read.count(v) == 0; });
}

}  // namespace

void run_passes(Graph& g, const PassOptions& options) {
  tag_backward(g);
  verify(g);
  if (options.fuse) {
    fuse_linear_gelu(g);
    verify(g);
    fuse_dgelu_bgrad(g);
    verify(g);
  }
  if (options.eliminate_casts) {
    eliminate_casts(g);
    verify(g);
  }
  if (options.eliminate_dead_nodes) {
    eliminate_dead_nodes(g);
    verify(g);
  }
  refresh_yield(g);
  verify(g);
}

}  // namespace ampkit::graph
