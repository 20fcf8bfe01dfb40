// The graph builder (graph layer): inputs, parameters, the autocast rule (compute_copy) and the
// checked append every op method goes through (builder.hpp). The op methods themselves (shape
// and dtype inference) live with their op definitions in src/graph/ops/<family>.cpp. Each node
// is checked by its op's rules as it is appended, so a bad call fails at once, naming the node.
#include "ampkit/graph/builder.hpp"

#include <utility>

#include "ampkit/core/error.hpp"
#include "graph/ops/op_def.hpp"

namespace ampkit::graph {
Builder::Builder(Graph& g, BuilderOptions options) : g_(g), options_(options) {
  if (!is_float_dtype(options.compute))
    fail("graph::Builder", "options.compute must be f32, bf16 or f16, but got ", dtype_name(options.compute));
}

const Value& Builder::value(ValueId v) const { return g_.value(v); }

ValueId Builder::intermediate(const std::string& name, DType dtype, std::vector<std::int64_t> shape) {
  return g_.add_value(name, dtype, std::move(shape), ValueKind::intermediate);
}

int Builder::append(OpKind op, const std::string& name, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
                    Attributes attrs) {
  for (ValueId v : inputs)
    if (v != kNoValue) (void)g_.value(v);  // range check with a clear message
  const int index = g_.add_node(make_node(op, name, std::move(inputs), std::move(outputs), attrs));
  try {
    check_node_signature(g_, index);
  } catch (...) {
    g_.nodes.pop_back();  // leave the graph as it was
    throw;
  }
  return index;
}

ValueId Builder::input(const std::string& name, DType dtype, std::vector<std::int64_t> shape) {
  return g_.add_value(name, dtype, std::move(shape), ValueKind::input);
}

ValueId Builder::parameter(const std::string& name, std::vector<std::int64_t> shape) {
  return g_.add_value(name, DType::f32, std::move(shape), ValueKind::parameter);
}

ValueId Builder::compute_copy(ValueId v) {
  const Value src = value(v);  // a copy: cast() adds values, which may reallocate
  if (src.dtype == options_.compute || !is_float_dtype(src.dtype)) return v;
  if (auto it = casts_.find(v); it != casts_.end()) return it->second;
  const std::string name = src.name + "." + std::string(dtype_name(options_.compute));
  const ValueId y = cast(v, options_.compute, name);
  if (src.kind == ValueKind::parameter) casts_[v] = y;
  return y;
}

}  // namespace ampkit::graph
