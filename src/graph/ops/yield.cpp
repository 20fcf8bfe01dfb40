// The Yield op (graph layer): ends the forward part and keeps the forward values the backward
// reads; no check beyond "at most one", no gradient, nothing to run. Also the graph's query for
// it (Graph::yield_index) and its construction for autodiff (make_yield).
#include <utility>

#include "graph/ops/op_def.hpp"

namespace ampkit::graph {
namespace {

void check(const OpCheck& c) {
  if (c.graph().yield_index() != c.index()) c.fail("a graph has at most one Yield");
}

void bind(BoundNode&, const NodeOperands&) {}
void run(const BoundNode&, NodeRecord&) {}

}  // namespace

const OpDef kYieldOp{OpKind::Yield, "Yield", -1, 0, check, nullptr, bind, nullptr, nullptr, run, nullptr};

int Graph::yield_index() const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].op == OpKind::Yield) return static_cast<int>(i);
  return -1;
}

Node make_yield(std::vector<ValueId> saved) {
  return make_node(OpKind::Yield, "yield", std::move(saved), {}, Attributes{});
}

}  // namespace ampkit::graph
