// A node bound for running (graph layer, internal): the operand views each op definition's bind
// builds once from the values' memory (when the executor is built, or after a value is rebound),
// and the plan its prepare makes of them once (the ops' prepared calls: problem validated, kernel
// entry selected), which its run runs at every step. Used by executor.cpp and the op
// definitions (src/graph/ops/).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/graph/executor.hpp"
#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

struct OpDef;

/// What an op's prepare made of a bound node once: the ops' prepared calls (the problem validated,
/// the kernel entry selected; src/ops/prepared_ops.hpp), in a type the op's file defines
/// (NodePlanOf<T>). One allocation per node and bind, none per run.
struct NodePlan {
  virtual ~NodePlan() = default;
};

template <class T>
struct NodePlanOf final : NodePlan {
  explicit NodePlanOf(T v) : value(std::move(v)) {}
  T value;
};

struct BoundNode {
  const OpDef* def = nullptr;
  Attributes attrs;
  std::vector<TensorView> views;   // in the order the op's bind pushed them
  const void* scalar = nullptr;    // an f32 scalar operand read on the host at each run
  std::unique_ptr<NodePlan> plan;  // the op's prepare, made at the node's first run after a bind
  Device device = Device::cpu;
  int device_index = 0;
  ValueId unbound = kNoValue;  // an external input with no memory yet (the node cannot run)
};

/// The f32 scalar b.scalar, read on the host (copied back from the GPU: the call waits).
float read_bound_scalar(const BoundNode& b);

/// b.plan as the T an op's prepare stored with set_plan (the op's own type: no check).
template <class T>
T& plan_of(const BoundNode& b) {
  return static_cast<NodePlanOf<T>*>(b.plan.get())->value;
}
template <class T>
void set_plan(BoundNode& b, T value) {
  b.plan = std::make_unique<NodePlanOf<T>>(std::move(value));
}

/// Views of one node's operands, on the executor's device (what an op's bind builds from).
class NodeOperands {
 public:
  NodeOperands(const Graph& g, const Node& n, const std::vector<void*>& data, const ExecutorOptions& options)
      : g_(g), n_(n), data_(data), options_(options) {}

  /// Row-major view of input/output slot s (absent view for an absent slot).
  TensorView in(int s) const { return view(n_.inputs[static_cast<std::size_t>(s)]); }
  TensorView out(int s) const { return view(n_.outputs[static_cast<std::size_t>(s)]); }
  /// The same memory as [rows, last dim].
  TensorView in_2d(int s) const { return as_2d(n_.inputs[static_cast<std::size_t>(s)]); }
  TensorView out_2d(int s) const { return as_2d(n_.outputs[static_cast<std::size_t>(s)]); }
  /// The same memory as one flat [numel] vector.
  TensorView in_flat(int s) const;
  /// The memory of input slot s.
  const void* in_data(int s) const { return data_[static_cast<std::size_t>(n_.inputs[static_cast<std::size_t>(s)])]; }

 private:
  TensorView view(ValueId v) const;
  TensorView as_2d(ValueId v) const;
  TensorView on_device(TensorView v) const;

  const Graph& g_;
  const Node& n_;
  const std::vector<void*>& data_;
  const ExecutorOptions& options_;
};

}  // namespace ampkit::graph
