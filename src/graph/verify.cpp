// The graph verifier (graph layer): structure and definedness first (so every later check may
// look values up freely), then each node's signature (its op definition's check and the op's
// descriptor check, src/graph/ops/), then the backward-tag invariant. Called by the builder, autodiff, every pass and
// the executor's planner.
#include "ampkit/graph/verify.hpp"

#include <vector>

#include "ampkit/core/error.hpp"
#include "graph/ops/op_def.hpp"

namespace ampkit::graph {
namespace {

template <typename... Args>
[[noreturn]] void node_fail(const Graph& g, int index, Args&&... parts) {
  throw Error(detail::concat("graph: ", describe_node(g, index), ": ", std::forward<Args>(parts)...));
}

void check_values(const Graph& g) {
  for (std::size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    if (v.id != static_cast<ValueId>(i)) fail("graph", "value '", v.name, "' at position ", i, " has id ", v.id);
    if (v.dtype != DType::f32 && v.dtype != DType::bf16 && v.dtype != DType::f16 && v.dtype != DType::i32)
      fail("graph", "value %", i, " '", v.name, "' has an invalid dtype ", static_cast<int>(v.dtype));
    for (std::int64_t d : v.shape)
      if (d < 0) fail("graph", "value %", i, " '", v.name, "' has a negative dim");
  }
}

}  // namespace

void verify(const Graph& g, const VerifyOptions& options) {
  check_values(g);
  // defined[v]: v may be read now. Inputs, parameters and gradient seeds (gradients no node
  // produces) are defined from the start; the rest once their producer has run.
  std::vector<int> producer(g.values.size(), -1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].outputs) {
      if (v == kNoValue) continue;
      const int index = static_cast<int>(i);
      if (v < 0 || static_cast<std::size_t>(v) >= g.values.size())
        node_fail(g, index, "output id %", v, " is out of range");
      if (producer[static_cast<std::size_t>(v)] >= 0)
        node_fail(g, index, "output %", v, " '", g.value(v).name, "' is already produced by ",
                  describe_node(g, producer[static_cast<std::size_t>(v)]));
      const ValueKind k = g.value(v).kind;
      if (k == ValueKind::input || k == ValueKind::parameter)
        node_fail(g, index, "output %", v, " '", g.value(v).name, "' is a graph ",
                  k == ValueKind::input ? "input" : "parameter", " and cannot be produced by a node");
      producer[static_cast<std::size_t>(v)] = index;
    }
  std::vector<bool> defined(g.values.size(), false);
  const std::vector<void*> no_data(g.values.size(), nullptr);  // the descriptors' memory
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    const ValueKind k = g.values[v].kind;
    if (producer[v] < 0 && k != ValueKind::intermediate) defined[v] = true;
  }
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const int index = static_cast<int>(i);
    if (static_cast<unsigned>(n.op) >= static_cast<unsigned>(kOpKindCount))
      node_fail(g, index, "unknown op kind ", static_cast<int>(n.op));
    const int want_in = op_input_slots(n.op), want_out = op_output_slots(n.op);
    if (want_in >= 0 && static_cast<int>(n.inputs.size()) != want_in)
      node_fail(g, index, "expected ", want_in, " input slots, but got ", n.inputs.size());
    if (static_cast<int>(n.outputs.size()) != want_out)
      node_fail(g, index, "expected ", want_out, " output slots, but got ", n.outputs.size());
    for (std::size_t s = 0; s < n.inputs.size(); ++s) {
      const ValueId v = n.inputs[s];
      if (v == kNoValue) continue;
      if (v < 0 || static_cast<std::size_t>(v) >= g.values.size())
        node_fail(g, index, "input slot ", s, " has id %", v, ", out of range");
      if (!defined[static_cast<std::size_t>(v)])
        node_fail(
            g, index, "input %", v, " '", g.value(v).name, "' is read before it is defined",
            producer[static_cast<std::size_t>(v)] >= 0
                ? detail::concat(" (its producer is ", describe_node(g, producer[static_cast<std::size_t>(v)]), ")")
                : std::string(" (no node produces it)"));
    }
    for (std::size_t s = 0; s < n.outputs.size(); ++s)
      for (std::size_t t = 0; t < n.inputs.size(); ++t)
        if (n.outputs[s] != kNoValue && n.outputs[s] == n.inputs[t])
          node_fail(g, index, "output %", n.outputs[s], " is also its own input");
    check_node_signature(g, index, no_data);
    for (ValueId v : n.outputs)
      if (v != kNoValue) defined[static_cast<std::size_t>(v)] = true;
  }
  for (ValueId v : g.outputs) {
    if (v < 0 || static_cast<std::size_t>(v) >= g.values.size())
      fail("graph", "graph output id %", v, " is out of range");
    if (!defined[static_cast<std::size_t>(v)])
      fail("graph", "graph output %", v, " '", g.value(v).name, "' is never defined");
  }
  if (options.tags) verify_tags(g);
}

void verify_tags(const Graph& g) {
  const int y = g.yield_index();
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const int index = static_cast<int>(i);
    const bool want = y >= 0 && index > y;
    if (n.attrs.backward != want)
      node_fail(
          g, index,
          n.attrs.backward ? "carries the backward tag but precedes Yield" : "follows Yield but lacks the backward tag",
          y < 0 ? " (the graph has no Yield)" : "");
    if (n.attrs.backward) continue;
    for (ValueId v : n.inputs)
      if (v != kNoValue && g.value(v).kind == ValueKind::gradient)
        node_fail(g, index, "is not tagged backward but reads the gradient %", v, " '", g.value(v).name, "'");
  }
}

}  // namespace ampkit::graph
