// The graph IR's containers (graph layer): op names and slot counts, value sizes, Graph's
// builder primitives and queries. Validation lives in verify.cpp / op_checks.cpp; text forms in
// dump.cpp.
#include "ampkit/graph/ir.hpp"

#include <algorithm>
#include <utility>

#include "ampkit/core/error.hpp"

namespace ampkit::graph {
namespace {

struct OpInfo {
  std::string_view name;
  int inputs;
  int outputs;
};

constexpr OpInfo kOps[kOpKindCount] = {
    {"Embedding", 2, 1},
    {"Linear", 3, 2},
    {"LayerNorm", 3, 3},
    {"RMSNorm", 2, 2},
    {"Gelu", 1, 1},
    {"Add", 2, 1},
    {"Attention", 1, 2},
    {"SoftmaxCrossEntropy", 2, 2},
    {"Cast", 1, 1},
    {"Yield", -1, 0},
    {"EmbeddingBackward", 2, 1},
    {"LinearBackward", 4, 4},
    {"LayerNormBackward", 5, 3},
    {"RMSNormBackward", 4, 2},
    {"GeluBackward", 2, 1},
    {"AttentionBackward", 4, 1},
    {"SoftmaxCrossEntropyBackward", 4, 1},
};

const OpInfo* info(OpKind op) {
  const auto i = static_cast<unsigned>(op);
  return i < static_cast<unsigned>(kOpKindCount) ? &kOps[i] : nullptr;
}

}  // namespace

std::string_view op_name(OpKind op) {
  const OpInfo* i = info(op);
  return i ? i->name : std::string_view("?");
}
int op_input_slots(OpKind op) {
  const OpInfo* i = info(op);
  return i ? i->inputs : 0;
}
int op_output_slots(OpKind op) {
  const OpInfo* i = info(op);
  return i ? i->outputs : 0;
}

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

int Graph::yield_index() const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].op == OpKind::Yield) return static_cast<int>(i);
  return -1;
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
