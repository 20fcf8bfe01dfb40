// The graph's op table (graph layer): every OpKind's definition, in enum order, and the lookups
// the generic files use (op_def.hpp). Adding an op: an enum value, its OpDef in its family file,
// one line here.
#include <cstddef>
#include <utility>

#include "ampkit/core/error.hpp"
#include "graph/ops/op_def.hpp"

namespace ampkit::graph {
namespace {

const OpDef* const kTable[kOpKindCount] = {
    &kEmbeddingOp,
    &kLinearOp,
    &kLayerNormOp,
    &kRMSNormOp,
    &kGeluOp,
    &kAddOp,
    &kAttentionOp,
    &kSoftmaxCrossEntropyOp,
    &kCastOp,
    &kYieldOp,
    &kEmbeddingBackwardOp,
    &kLinearBackwardOp,
    &kLayerNormBackwardOp,
    &kRMSNormBackwardOp,
    &kGeluBackwardOp,
    &kAttentionBackwardOp,
    &kSoftmaxCrossEntropyBackwardOp,
    &kPool2dOp,
    &kPool2dBackwardOp,
    &kConv2dOp,
    &kConv2dBackwardOp,
};

}  // namespace

const OpDef* find_op_def(OpKind op) {
  const auto i = static_cast<unsigned>(op);
  return i < static_cast<unsigned>(kOpKindCount) ? kTable[i] : nullptr;
}

const OpDef& op_def(OpKind op) {
  const OpDef* d = find_op_def(op);
  if (!d) fail_with(ErrorKind::internal, "graph", "unknown op kind ", static_cast<int>(op));
  return *d;
}

std::string_view op_name(OpKind op) {
  const OpDef* d = find_op_def(op);
  return d ? d->name : std::string_view("?");
}
int op_input_slots(OpKind op) {
  const OpDef* d = find_op_def(op);
  return d ? d->inputs : 0;
}
int op_output_slots(OpKind op) {
  const OpDef* d = find_op_def(op);
  return d ? d->outputs : 0;
}

void check_node_signature(const Graph& g, int index, const std::vector<void*>& no_data) {
  const OpCheck c(g, index);
  const OpDef* d = find_op_def(c.node().op);
  if (!d) c.fail("unknown op kind ", static_cast<int>(c.node().op));
  d->check(c);
  if (!d->descriptor) return;
  // The op decides the rest from the views the executor will bind, with no memory yet (on the
  // cpu: the device rules are the executor's, checked when it binds).
  static const ExecutorOptions kDescriptorOptions{};
  BoundNode b;
  b.def = d;
  b.attrs = c.node().attrs;
  std::string message;
  try {
    d->bind(b, NodeOperands(g, c.node(), no_data, kDescriptorOptions));
    message = d->descriptor(b);
  } catch (const Error& e) {
    message = e.what();
  }
  if (!message.empty()) c.fail(message);
}

void check_node_signature(const Graph& g, int index) {
  const std::vector<void*> no_data(g.values.size(), nullptr);
  check_node_signature(g, index, no_data);
}

Node make_node(OpKind op, std::string name, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
               const Attributes& attrs) {
  Node n;
  n.op = op;
  n.name = std::move(name);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attrs = attrs;
  return n;
}

const char* gelu_variant_text(GeluVariant v) { return v == GeluVariant::erf ? "erf" : "tanh"; }

}  // namespace ampkit::graph
