// The pass pipeline of a training graph (graph layer): a list of Pass{name, run} run in order,
// the whole graph verified (tag invariant included) after each, one report per pass; the
// standard list (tag, fuse, eliminate casts and dead nodes, trim Yield). Called by the trainer
// and tests.
#include <set>
#include <sstream>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/passes.hpp"
#include "ampkit/graph/verify.hpp"

namespace ampkit::graph {

int trim_yield(Graph& g) {
  const int y = g.yield_index();
  if (y < 0) return 0;
  std::set<ValueId> read(g.outputs.begin(), g.outputs.end());
  for (std::size_t i = static_cast<std::size_t>(y) + 1; i < g.nodes.size(); ++i)
    read.insert(g.nodes[i].inputs.begin(), g.nodes[i].inputs.end());
  std::vector<ValueId>& in = g.nodes[static_cast<std::size_t>(y)].inputs;
  return static_cast<int>(std::erase_if(in, [&](ValueId v) { return read.count(v) == 0; }));
}

std::vector<Pass> default_passes(const PassOptions& options) {
  std::vector<Pass> passes{{"tag_backward", tag_backward}};
  if (options.fuse) {
    passes.push_back({"fuse_linear_gelu", fuse_linear_gelu});
    passes.push_back({"fuse_dgelu_bgrad", fuse_dgelu_bgrad});
  }
  if (options.eliminate_casts) passes.push_back({"eliminate_casts", eliminate_casts});
  if (options.eliminate_dead_nodes) passes.push_back({"eliminate_dead_nodes", eliminate_dead_nodes});
  passes.push_back({"trim_yield", trim_yield});
  return passes;
}

std::vector<PassReport> run_pipeline(Graph& g, const std::vector<Pass>& passes) {
  std::vector<PassReport> reports;
  reports.reserve(passes.size());
  for (const Pass& pass : passes) {
    if (!pass.run) fail("graph::run_pipeline", "pass '", pass.name, "' has no run function");
    PassReport r;
    r.name = pass.name;
    r.nodes_before = static_cast<int>(g.nodes.size());
    r.changes = pass.run(g);
    r.nodes_after = static_cast<int>(g.nodes.size());
    try {
      verify(g);
    } catch (const Error& e) {
      throw Error(detail::concat("graph pass '", pass.name, "': ", e.what()), e.kind());
    }
    reports.push_back(std::move(r));
  }
  return reports;
}

std::vector<PassReport> run_passes(Graph& g, const PassOptions& options) {
  return run_pipeline(g, default_passes(options));
}

std::string pass_report_text(const std::vector<PassReport>& reports) {
  std::ostringstream o;
  for (const PassReport& r : reports)
    o << r.name << ": " << r.changes << (r.changes == 1 ? " change" : " changes") << ", nodes " << r.nodes_before
      << " -> " << r.nodes_after << "\n";
  return o.str();
}

}  // namespace ampkit::graph
