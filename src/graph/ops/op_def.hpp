// The graph's op table (graph layer, internal): one OpDef per OpKind — its slots, its check,
// its gradient rule, its kernel binding, preparation and run, its dump text — defined in one file per op
// family (src/graph/ops/<family>.cpp) and listed once in op_table.cpp. The generic files (ir,
// verify, autodiff, executor, dump) reach ops only through op_def().
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ampkit/graph/ir.hpp"
#include "graph/ops/bound_node.hpp"
#include "graph/ops/gradient_context.hpp"
#include "graph/ops/op_check.hpp"

namespace ampkit::graph {

struct OpDef {
  OpKind kind;
  std::string_view name;  // "Linear", "LayerNormBackward", ...
  int inputs;             // slot counts; -1: any number (Yield)
  int outputs;
  /// The graph's own rules of one node (throws through c.fail): required slots, the rules the
  /// binding's reshapes hide from the op (flattened ids, packed qkv, a host scalar), "computes
  /// nothing". Runs before `descriptor`, so the bind may rely on it.
  void (*check)(const OpCheck& c);
  /// Emits the gradient nodes of a forward node; nullptr for ops autodiff does not
  /// differentiate (the backward ops, Yield).
  void (*differentiate)(GradientContext& d, const Node& n, int index);
  /// Builds the node's operand views once (b.views, b.scalar), when the executor is built or a
  /// value is rebound.
  void (*bind)(BoundNode& b, const NodeOperands& o);
  /// The op's memory-free descriptor check (<op>_descriptor_check) over the views `bind` built
  /// with null data: "" or the message the run would throw for these shapes, dtypes and
  /// attributes. Called by the verifier only (build time), never per run; nullptr: no op call.
  std::string (*descriptor)(const BoundNode& b);
  /// Prepares the bound node's op calls once (b.plan: src/ops/prepared_ops.hpp), from the views
  /// `bind` built with the values' memory: validation (its errors are the call's) and the kernel
  /// selection. Called by the executor at the node's first run after a bind, inside the node's
  /// BackwardPassGuard; nullptr: nothing to prepare (Yield).
  void (*prepare)(BoundNode& b);
  /// Runs the prepared node: only what must happen per call (the fp16 mode of a GEMM node, the
  /// checks of ids and targets, a host scalar, the counters) and the kernels.
  void (*run)(const BoundNode& b, NodeRecord& record);
  /// The attributes the op reads, as " key=value" pairs (nullptr: none).
  void (*attr_text)(const Attributes& a, std::ostream& o);
};

/// The definition of `op`, or nullptr for a value outside the enum.
const OpDef* find_op_def(OpKind op);
/// The definition of `op`; throws an internal ampkit::Error for a value outside the enum.
const OpDef& op_def(OpKind op);

/// Checks the required slots, dtypes, shapes and attributes of node `index` for its op (slot
/// counts and definedness already checked by the verifier): the op definition's own check, then
/// the op's descriptor check over the views its bind builds with null data (`no_data`: one null
/// per value of g). Throws ampkit::Error "graph: node i (Op 'name'): ...".
void check_node_signature(const Graph& g, int index, const std::vector<void*>& no_data);
void check_node_signature(const Graph& g, int index);

/// A node of `op` with these slots and attributes (unchecked).
Node make_node(OpKind op, std::string name, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
               const Attributes& attrs);

/// The Yield node that ends the forward part, keeping `saved` for the backward.
Node make_yield(std::vector<ValueId> saved);

/// Emits y = a + b (the Add node that sums two gradient contributions).
void emit_sum(GradientContext& d, const std::string& name, ValueId a, ValueId b, ValueId y);

/// "tanh" / "erf", for dump texts.
const char* gelu_variant_text(GeluVariant v);

// The op definitions, one per OpKind (src/graph/ops/<family>.cpp).
extern const OpDef kEmbeddingOp, kEmbeddingBackwardOp;
extern const OpDef kLinearOp, kLinearBackwardOp;
extern const OpDef kLayerNormOp, kRMSNormOp, kLayerNormBackwardOp, kRMSNormBackwardOp;
extern const OpDef kGeluOp, kGeluBackwardOp, kAddOp, kCastOp;
extern const OpDef kAttentionOp, kAttentionBackwardOp;
extern const OpDef kSoftmaxCrossEntropyOp, kSoftmaxCrossEntropyBackwardOp;
extern const OpDef kPool2dOp, kPool2dBackwardOp;
extern const OpDef kConv2dOp, kConv2dBackwardOp;
extern const OpDef kYieldOp;

}  // namespace ampkit::graph
