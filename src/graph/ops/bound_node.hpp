// A node bound for running (graph layer, internal): the operand views each op definition's bind
// builds once from the values' memory (when the executor is built, or after a value is rebound),
// and that its run hands to the public ops at every step. Used by executor.cpp and the op
// definitions (src/graph/ops/).
#pragma once

#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/graph/executor.hpp"
#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

struct OpDef;

struct BoundNode {
  const OpDef* def = nullptr;
  Attributes attrs;
  std::vector<TensorView> views;  // in the order the op's bind pushed them
  const void* scalar = nullptr;   // an f32 scalar operand read on the host at each run
  Device device = Device::cpu;
  int device_index = 0;
  ValueId unbound = kNoValue;  // an external input with no memory yet (the node cannot run)
};

/// The f32 scalar b.scalar, read on the host (copied back from the GPU: the call waits).
float read_bound_scalar(const BoundNode& b);

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
