// The graph IR's containers (graph layer): value sizes, Graph's builder primitives and queries.
// What each op is (name, slots, check, gradient, kernel) lives in its definition in
// src/graph/ops/; validation in verify.cpp; text forms in dump.cpp.
#include "ampkit/graph/ir.hpp"

#include <algorithm>
#include <utility>

#include "ampkit/core/error.hpp"

namespace ampkit::graph {
std::int64_t Value::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}
std::int64_t Value::bytes() const { return numel() * static_cast<std::int64_t>(dtype_size(dtype)); }

ValueId Graph::add_value(std::string name, DType dtype, std::vector<std::int64_t> shape, ValueKind kind) {
  Value v;
  v.id = static_cast<ValueId>(values.size());
  v.name = std::move(name);
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.kind = kind;
  values.push_back(std::move(v));
  return values.back().id;
}

int Graph::add_node(Node node) {
  nodes.push_back(std::move(node));
  return static_cast<int>(nodes.size()) - 1;
}

const Value& Graph::value(ValueId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= values.size())
    fail("graph", "value id %", id, " is out of range [0, ", values.size(), ")");
  return values[static_cast<std::size_t>(id)];
}
Value& Graph::value(ValueId id) { return const_cast<Value&>(static_cast<const Graph&>(*this).value(id)); }

int Graph::producer(ValueId id) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (std::find(nodes[i].outputs.begin(), nodes[i].outputs.end(), id) != nodes[i].outputs.end())
      return static_cast<int>(i);
  return -1;
}

std::vector<int> Graph::consumers(ValueId id) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (std::find(nodes[i].inputs.begin(), nodes[i].inputs.end(), id) != nodes[i].inputs.end())
      out.push_back(static_cast<int>(i));
  return out;
}

std::vector<bool> Graph::used_values() const {
  std::vector<bool> used(values.size(), false);
  auto mark = [&](ValueId v) {
    if (v >= 0 && static_cast<std::size_t>(v) < values.size()) used[static_cast<std::size_t>(v)] = true;
  };
  for (const Node& n : nodes) {
    for (ValueId v : n.inputs) mark(v);
    for (ValueId v : n.outputs) mark(v);
  }
  for (ValueId v : outputs) mark(v);
  return used;
}

std::string describe_node(const Graph& g, int index) {
  if (index < 0 || static_cast<std::size_t>(index) >= g.nodes.size()) return detail::concat("node ", index);
  const Node& n = g.nodes[static_cast<std::size_t>(index)];
  return detail::concat("node ", index, " (", op_name(n.op), " '", n.name, "')");
}

}  // namespace ampkit::graph
