// Optimization passes over a training graph (graph layer, public). Each pass rewrites the graph
// in place, keeps every value id it does not remove, and keeps the backward tag: a node it
// changes keeps its own tag, a node it creates copies the tag of the node it replaces
// (copy_tag_from), so verify_tags holds after every pass. A pipeline is a list of Pass{name, run}
// run by run_pipeline, which verifies after each and reports what each changed. See docs/GRAPH.md
// for each rewrite. Called by the trainer and tests.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

/// Sets attrs.backward on every node after Yield and clears it on the others (the
/// `__backwardpass` attribute of DESIGN.md section 5). Returns the number of tagged nodes.
/// A graph without Yield ends up with no tagged node.
int tag_backward(Graph& g);

/// Gives `node` the backward tag of `like`: the one helper every rewrite uses for the nodes it
/// creates.
void copy_tag_from(Node& node, const Node& like);

/// Linear (no GELU) whose output y is read, among the forward nodes, only by one Gelu: the Gelu
/// is removed and the Linear becomes Linear(gelu) with outputs (the Gelu's y, aux = the old y)
/// — one GEMM with the GELU_AUX_BIAS epilogue. Backward readers of the old y (GeluBackward) now
/// read the aux. Returns the number of fusions.
int fuse_linear_gelu(Graph& g);

/// In the backward: LinearBackward U whose dx is read only by a GeluBackward G whose x is the
/// pre-activation of a layer below, with G's dx read by a LinearBackward D (the layer below's):
/// U gets below_gelu, below_aux = G's x, dx = G's dx (DGELU), and D's db moves to U's below_db
/// (DGELU_BGRAD); G is removed. Returns the number of fusions.
int fuse_dgelu_bgrad(Graph& g);

/// A Cast of a gradient that is the only reader of a LinearBackward's dw or db output, or of an
/// EmbeddingBackward's dtable: the producer writes the Cast's dtype directly (the GEMM rounds
/// its fp32 accumulator once, to f32, instead of twice) and the Cast is removed. Returns the
/// number of casts removed.
int eliminate_casts(Graph& g);

/// Removes every node none of whose outputs is a graph output or read by a node that stays
/// (Yield excepted: it keeps values for the backward, it does not need them), and drops the
/// removed nodes' values from Yield. Returns the number of nodes removed.
int eliminate_dead_nodes(Graph& g);

/// Trims Yield to the values the backward still reads (and graph outputs), so the planner frees
/// the rest at the end of the forward. Returns the number of values dropped from Yield.
int trim_yield(Graph& g);

/// One pass of a pipeline: a name for reports and errors, and the rewrite, which returns how
/// many things it changed (nodes fused, removed, tagged, values dropped).
struct Pass {
  std::string name;
  std::function<int(Graph&)> run;
};

/// What one pass did.
struct PassReport {
  std::string name;
  int changes = 0;       // the pass's own count (see each pass above)
  int nodes_before = 0;  // node counts around the pass
  int nodes_after = 0;
};

struct PassOptions {
  bool fuse = true;  // fuse_linear_gelu and fuse_dgelu_bgrad
  bool eliminate_casts = true;
  bool eliminate_dead_nodes = true;
};

/// The standard pipeline: tag_backward, then the chosen passes in order (fuse_linear_gelu,
/// fuse_dgelu_bgrad, eliminate_casts, eliminate_dead_nodes), last trim_yield.
std::vector<Pass> default_passes(const PassOptions& options = {});

/// Runs `passes` in order, verifying the whole graph (tags included) after each; a pass that
/// leaves the graph invalid fails with "graph pass '<name>': <the verifier's message>".
/// Returns one report per pass.
std::vector<PassReport> run_pipeline(Graph& g, const std::vector<Pass>& passes);
/// run_pipeline(g, default_passes(options)).
std::vector<PassReport> run_passes(Graph& g, const PassOptions& options = {});

/// One line per pass: "fuse_linear_gelu: 2 changes, nodes 31 -> 29".
std::string pass_report_text(const std::vector<PassReport>& reports);

}  // namespace ampkit::graph
