// The pass pipeline of a training graph (graph layer): tag, fuse, eliminate casts, verifying
// the whole graph (tag invariant included) after every pass. Called by the trainer and tests.
#include "ampkit/graph/passes.hpp"
#include "ampkit/graph/verify.hpp"

namespace ampkit::graph {

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
}

}  // namespace ampkit::graph
