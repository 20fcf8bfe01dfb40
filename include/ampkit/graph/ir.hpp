// The training-graph IR (graph layer, public): values (dtype, shape, kind) and nodes (op,
// positional inputs and outputs, typed attributes, the backward tag), kept in topological order.
// Built by graph/builder.hpp and autodiff, rewritten by the passes, planned and run by the
// executor. Text dump and Graphviz dot for docs and debugging. See docs/GRAPH.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/ops/conv2d.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/ops/pool2d.hpp"

namespace ampkit::graph {

/// Index of a value in Graph::values. kNoValue marks an absent optional input or output slot.
using ValueId = std::int32_t;
inline constexpr ValueId kNoValue = -1;

/// What a value is:
///   input        fed by the caller each run (token ids, targets, positions)
///   parameter    a trainable tensor bound by the caller (fp32 master weights)
///   intermediate produced by a forward node
///   gradient     a gradient: produced by a backward node, or the loss-gradient seed (an input
///                the caller fills with the loss scale)
enum class ValueKind : std::uint8_t { input, parameter, intermediate, gradient };

struct Value {
  ValueId id = kNoValue;
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  ValueKind kind = ValueKind::intermediate;

  std::int64_t numel() const;
  std::int64_t bytes() const;
};

/// The operators. Slots (inputs -> outputs; `?` = optional, kNoValue when absent):
///   Embedding          (ids i32, table [V, D]) -> (y [ids..., D])
///   Linear             (x [..., in], w [out, in], b? [out]) -> (y [..., out], aux? [..., out])
///                      gelu: y = gelu(xwᵀ+b), aux = the pre-activation (GELU_AUX_BIAS)
///   LayerNorm          (x [..., n], gamma? [n], beta? [n]) -> (y, mean f32 [rows], rstd f32 [rows])
///   RMSNorm            (x [..., n], gamma? [n]) -> (y, rstd f32 [rows])
///   Gelu               (x) -> (y)
///   Add                (a, b) -> (y)           same shapes (residual add, gradient sums)
///   Attention          (qkv [B, T, 3C]) -> (out [B, T, C], lse f32 [B, H, T])  causal, heads H
///   SoftmaxCrossEntropy(logits [..., classes], targets i32 [...]) -> (loss f32 [], lse f32 [rows])
///   Cast               (x) -> (y)              y's dtype is the target
///   Yield              (forward values the backward reads) -> ()  ends the forward part
///   EmbeddingBackward  (ids, dy [ids..., D]) -> (dtable [V, D])
///   LinearBackward     (dy, x, w, below_aux?) -> (dx?, dw?, db?, below_db?)
///                      below_gelu: dx = (dy w) * gelu'(below_aux), below_db = its row sum
///                      (DGELU_BGRAD for the layer below)
///   LayerNormBackward  (dy, x, mean, rstd, gamma?) -> (dx?, dgamma?, dbeta?)
///   RMSNormBackward    (dy, x, rstd, gamma?) -> (dx?, dgamma?)
///   GeluBackward       (x, dy) -> (dx)
///   AttentionBackward  (qkv, out, lse, dout) -> (dqkv)
///   SoftmaxCrossEntropyBackward (logits, targets, lse, dloss f32 []) -> (dlogits)
///   Pool2d             (x [N, C, H, W]) -> (y [N, C, OH, OW])  max or average (attrs.pool)
///   Pool2dBackward     (x, dy [N, C, OH, OW]) -> (dx [N, C, H, W])
///   Conv2d             (x [N, C, H, W], w [K, C/G, R, S], b? [K]) -> (y [N, K, P, Q])  NCHW, attrs.conv
///   Conv2dBackward     (dy, x, w) -> (dx?, dw?, db?)
enum class OpKind : std::uint8_t {
  Embedding,
  Linear,
  LayerNorm,
  RMSNorm,
  Gelu,
  Add,
  Attention,
  SoftmaxCrossEntropy,
  Cast,
  Yield,
  EmbeddingBackward,
  LinearBackward,
  LayerNormBackward,
  RMSNormBackward,
  GeluBackward,
  AttentionBackward,
  SoftmaxCrossEntropyBackward,
  Pool2d,
  Pool2dBackward,
  Conv2d,
  Conv2dBackward,
};
inline constexpr int kOpKindCount = 21;

/// "Linear", "LayerNormBackward", ...
std::string_view op_name(OpKind op);
/// The number of input and output slots of an op (Yield: any number of inputs).
int op_input_slots(OpKind op);
int op_output_slots(OpKind op);

/// Typed attributes; each op reads only its own (listed in docs/GRAPH.md).
struct Attributes {
  bool gelu = false;                             // Linear: fused GELU epilogue
  bool below_gelu = false;                       // LinearBackward: DGELU(_BGRAD) for the layer below
  GeluVariant gelu_variant = GeluVariant::tanh;  // Linear(gelu), Gelu, GeluBackward,
                                                 // LinearBackward(below_gelu)
  float eps = 1e-5f;                             // LayerNorm, RMSNorm (and their backward: unused)
  std::int32_t heads = 0;                        // Attention, AttentionBackward
  Pool2dParams pool{};                           // Pool2d, Pool2dBackward
  Conv2dParams conv{};                           // Conv2d, Conv2dBackward (fp16_mode: unused, the policy decides)
  /// The `__backwardpass` tag (DESIGN.md section 5): set by tag_backward on every node after
  /// Yield; the executor enters a BackwardPassGuard around tagged nodes. Passes that create
  /// nodes copy it from the node they replace.
  bool backward = false;
};

struct Node {
  OpKind op = OpKind::Yield;
  std::string name;
  std::vector<ValueId> inputs;   // op_input_slots(op) entries (kNoValue for absent ones)
  std::vector<ValueId> outputs;  // op_output_slots(op) entries
  Attributes attrs;
};

/// A graph: values and nodes in topological order (a node's inputs are graph inputs,
/// parameters, gradient seeds or outputs of earlier nodes). `outputs` are the values the caller
/// reads after a run (loss, parameter gradients, logits): the memory planner keeps them.
struct Graph {
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<ValueId> outputs;

  /// Adds a value and returns its id. Does not validate (the verifier does).
  ValueId add_value(std::string name, DType dtype, std::vector<std::int64_t> shape, ValueKind kind);
  /// Appends a node; returns its index.
  int add_node(Node node);

  const Value& value(ValueId id) const;  // throws Error on an id out of range
  Value& value(ValueId id);

  /// Index of the node that produces `id`, or -1 (inputs, parameters, seeds, unused values).
  int producer(ValueId id) const;
  /// Indices of the nodes that read `id`, in order.
  std::vector<int> consumers(ValueId id) const;
  /// Index of the Yield node, or -1.
  int yield_index() const;
  /// Values that some node reads or writes, or that are listed in outputs.
  std::vector<bool> used_values() const;
};

/// "node 7 (Linear 'h0.fc1')": how errors name a node.
std::string describe_node(const Graph& g, int index);

/// One line per node, e.g. `%9, %10 = Linear(%3, %4, %5) gelu=tanh [bwd]  // h0.fc1`, preceded
/// by the graph's inputs and parameters (`%3 = parameter h0.fc1.w f32[16, 8]`) and followed by
/// the outputs. Values are listed with dtype and shape where first defined.
std::string dump(const Graph& g);

/// Graphviz dot: nodes as boxes (backward nodes shaded), values as edges labelled with
/// `%id dtype[shape]`.
std::string to_dot(const Graph& g);

}  // namespace ampkit::graph
