// Operand views of a node bound for running (graph layer): what each op definition's bind
// builds its views from (bound_node.hpp). Called when the executor binds its nodes.
#include "graph/ops/bound_node.hpp"

#include "ops/backend.hpp"

namespace ampkit::graph {

float read_bound_scalar(const BoundNode& b) {
  float value = 0.0f;
  ops::backend(b.device).copy_to_host(&value, b.scalar, sizeof(float), b.device_index);
  return value;
}

TensorView NodeOperands::in_flat(int s) const {
  const ValueId v = n_.inputs[static_cast<std::size_t>(s)];
  const Value& val = g_.value(v);
  return on_device(TensorView(data_[static_cast<std::size_t>(v)], val.dtype, {val.numel()}));
}

TensorView NodeOperands::view(ValueId v) const {
  if (v == kNoValue) return TensorView();
  const Value& val = g_.value(v);
  return on_device(
      TensorView(data_[static_cast<std::size_t>(v)], val.dtype, val.shape.data(), static_cast<int>(val.shape.size())));
}

TensorView NodeOperands::as_2d(ValueId v) const {
  if (v == kNoValue) return TensorView();
  const Value& val = g_.value(v);
  const std::int64_t cols = val.shape.empty() ? 1 : val.shape.back();
  const std::int64_t rows = cols == 0 ? 0 : val.numel() / cols;
  return on_device(TensorView(data_[static_cast<std::size_t>(v)], val.dtype, {rows, cols}));
}

TensorView NodeOperands::on_device(TensorView v) const {
  v.device = options_.device;
  v.device_index = options_.device_index;
  return v;
}

}  // namespace ampkit::graph
