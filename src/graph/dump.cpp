// Text and Graphviz forms of a graph (graph layer): one line per node for docs, tests and
// `ampkit train --dump-graph`; dot for pictures. Each op's attribute text is its OpDef's. Called by users, tests and
// the trainer.
#include <sstream>

#include "ampkit/graph/ir.hpp"
#include "graph/ops/op_def.hpp"

namespace ampkit::graph {
namespace {

std::string type_text(const Value& v) {
  std::ostringstream o;
  o << dtype_name(v.dtype) << "[";
  for (std::size_t i = 0; i < v.shape.size(); ++i) o << (i ? ", " : "") << v.shape[i];
  o << "]";
  return o.str();
}

const char* kind_text(ValueKind k) {
  switch (k) {
    case ValueKind::input: return "input";
    case ValueKind::parameter: return "parameter";
    case ValueKind::intermediate: return "intermediate";
    case ValueKind::gradient: return "gradient";
  }
  return "?";
}

// "%7", or "_" for an absent slot.
void put_ref(std::ostringstream& o, ValueId v) {
  if (v == kNoValue)
    o << "_";
  else
    o << "%" << v;
}

// The attributes an op reads, as " key=value" pairs.
std::string attr_text(const Node& n) {
  std::ostringstream o;
  const Attributes& a = n.attrs;
  if (const OpDef* d = find_op_def(n.op); d && d->attr_text) d->attr_text(a, o);
  if (a.backward) o << " [bwd]";
  return o.str();
}

}  // namespace

std::string dump(const Graph& g) {
  std::ostringstream o;
  const std::vector<bool> used = g.used_values();
  std::vector<bool> produced(g.values.size(), false);
  for (const Node& n : g.nodes)
    for (ValueId v : n.outputs)
      if (v != kNoValue) produced[static_cast<std::size_t>(v)] = true;
  for (const Value& v : g.values)
    if (used[static_cast<std::size_t>(v.id)] && !produced[static_cast<std::size_t>(v.id)])
      o << "%" << v.id << " = " << kind_text(v.kind) << " " << v.name << " " << type_text(v) << "\n";
  for (const Node& n : g.nodes) {
    // Trailing absent outputs are left out; absent inputs print as `_` (slots are positional).
    std::size_t last = n.outputs.size();
    while (last > 0 && n.outputs[last - 1] == kNoValue) --last;
    for (std::size_t i = 0; i < last; ++i) {
      if (i) o << ", ";
      put_ref(o, n.outputs[i]);
    }
    if (last > 0) o << " = ";
    o << op_name(n.op) << "(";
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      if (i) o << ", ";
      put_ref(o, n.inputs[i]);
    }
    o << ")" << attr_text(n);
    if (!n.name.empty()) o << "  // " << n.name;
    o << "\n";
  }
  if (!g.outputs.empty()) {
    o << "outputs:";
    for (ValueId v : g.outputs) {
      o << " ";
      put_ref(o, v);
    }
    o << "\n";
  }
  // Types of the produced values, in id order, so a line above can be read back.
  for (const Value& v : g.values)
    if (produced[static_cast<std::size_t>(v.id)])
      o << "  %" << v.id << ": " << v.name << " " << type_text(v) << (v.kind == ValueKind::gradient ? " grad" : "")
        << "\n";
  return o.str();
}

std::string to_dot(const Graph& g) {
  std::ostringstream o;
  o << "digraph ampkit {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  std::vector<int> producer(g.values.size(), -1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].outputs)
      if (v != kNoValue) producer[static_cast<std::size_t>(v)] = static_cast<int>(i);
  const std::vector<bool> used = g.used_values();
  for (const Value& v : g.values)
    if (used[static_cast<std::size_t>(v.id)] && producer[static_cast<std::size_t>(v.id)] < 0)
      o << "  v" << v.id << " [shape=ellipse, label=\"%" << v.id << " " << v.name << "\\n" << type_text(v) << "\"];\n";
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    o << "  n" << i << " [label=\"" << op_name(n.op) << attr_text(n) << "\\n"
      << n.name << "\"" << (n.attrs.backward ? ", style=filled, fillcolor=\"#dddddd\"" : "") << "];\n";
    for (ValueId v : n.inputs) {
      if (v == kNoValue) continue;
      const int p = producer[static_cast<std::size_t>(v)];
      o << "  " << (p >= 0 ? 'n' : 'v') << (p >= 0 ? p : v) << " -> n" << i << " [label=\"%" << v << " "
        << type_text(g.value(v)) << "\"];\n";
    }
  }
  o << "}\n";
  return o.str();
}

}  // namespace ampkit::graph
