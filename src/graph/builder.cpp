// The graph builder (graph layer): shape/dtype inference for each forward op and the autocast
// rules (builder.hpp). Each node is checked by the verifier's per-op rules as it is appended,
// so a bad call fails at once, naming the node. Called by modules.cpp, the trainer and tests.
#include "ampkit/graph/builder.hpp"

#include <utility>

#include "ampkit/core/error.hpp"
#include "graph/op_checks.hpp"

namespace ampkit::graph {
namespace {

std::vector<std::int64_t> leading(const std::vector<std::int64_t>& s) {
  return s.empty() ? s : std::vector<std::int64_t>(s.begin(), s.end() - 1);
}
std::int64_t product(const std::vector<std::int64_t>& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

}  // namespace

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
  Node n;
  n.op = op;
  n.name = name;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attrs = attrs;
  const int index = g_.add_node(std::move(n));
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

ValueId Builder::embedding(ValueId ids, ValueId table, const std::string& name) {
  std::vector<std::int64_t> shape = value(ids).shape;
  const std::vector<std::int64_t> t = value(table).shape;
  shape.push_back(t.size() == 2 ? t[1] : 0);
  const ValueId y = intermediate(name + ".y", options_.compute, std::move(shape));
  append(OpKind::Embedding, name, {ids, table}, {y});
  return y;
}

ValueId Builder::linear(ValueId x, ValueId w, ValueId b, const std::string& name, bool gelu, GeluVariant variant,
                        ValueId* aux) {
  const ValueId wc = compute_copy(w);
  const std::vector<std::int64_t> ws = value(wc).shape;
  std::vector<std::int64_t> shape = leading(value(x).shape);
  shape.push_back(ws.size() == 2 ? ws[0] : 0);
  const ValueId y = intermediate(name + ".y", options_.compute, shape);
  ValueId a = kNoValue;
  if (gelu) a = intermediate(name + ".pre", options_.compute, shape);
  Attributes attrs;
  attrs.gelu = gelu;
  attrs.gelu_variant = variant;
  append(OpKind::Linear, name, {x, wc, b}, {y, a}, attrs);
  if (aux) *aux = a;
  return y;
}

ValueId Builder::layer_norm(ValueId x, ValueId gamma, ValueId beta, float eps, const std::string& name) {
  const Value xv = value(x);  // a copy: intermediate() adds values, which may reallocate
  const std::vector<std::int64_t> rows{product(leading(xv.shape))};
  const ValueId y = intermediate(name + ".y", xv.dtype, xv.shape);
  const ValueId mean = intermediate(name + ".mean", DType::f32, rows);
  const ValueId rstd = intermediate(name + ".rstd", DType::f32, rows);
  Attributes attrs;
  attrs.eps = eps;
  append(OpKind::LayerNorm, name, {x, gamma, beta}, {y, mean, rstd}, attrs);
  return y;
}

ValueId Builder::rms_norm(ValueId x, ValueId gamma, float eps, const std::string& name) {
  const Value xv = value(x);  // a copy: intermediate() adds values, which may reallocate
  const std::vector<std::int64_t> rows{product(leading(xv.shape))};
  const ValueId y = intermediate(name + ".y", xv.dtype, xv.shape);
  const ValueId rstd = intermediate(name + ".rstd", DType::f32, rows);
  Attributes attrs;
  attrs.eps = eps;
  append(OpKind::RMSNorm, name, {x, gamma}, {y, rstd}, attrs);
  return y;
}

ValueId Builder::gelu(ValueId x, GeluVariant variant, const std::string& name) {
  const ValueId y = intermediate(name + ".y", options_.compute, value(x).shape);
  Attributes attrs;
  attrs.gelu_variant = variant;
  append(OpKind::Gelu, name, {x}, {y}, attrs);
  return y;
}

ValueId Builder::add(ValueId a, ValueId b, const std::string& name) {
  const ValueId y = intermediate(name + ".y", options_.compute, value(a).shape);
  append(OpKind::Add, name, {a, b}, {y});
  return y;
}

ValueId Builder::attention(ValueId qkv, std::int32_t heads, const std::string& name) {
  const std::vector<std::int64_t> s = value(qkv).shape;  // a copy, as above
  const bool ok = s.size() == 3;
  const ValueId out =
      intermediate(name + ".out", options_.compute, ok ? std::vector<std::int64_t>{s[0], s[1], s[2] / 3} : s);
  const ValueId lse = intermediate(name + ".lse", DType::f32, ok ? std::vector<std::int64_t>{s[0], heads, s[1]} : s);
  Attributes attrs;
  attrs.heads = heads;
  append(OpKind::Attention, name, {qkv}, {out, lse}, attrs);
  return out;
}

ValueId Builder::softmax_cross_entropy(ValueId logits, ValueId targets, const std::string& name) {
  const std::vector<std::int64_t> rows{product(leading(value(logits).shape))};
  const ValueId loss = intermediate(name + ".loss", DType::f32, {});
  const ValueId lse = intermediate(name + ".lse", DType::f32, rows);
  append(OpKind::SoftmaxCrossEntropy, name, {logits, targets}, {loss, lse});
  return loss;
}

ValueId Builder::cast(ValueId x, DType dtype, const std::string& name) {
  const ValueId y = intermediate(name, dtype, value(x).shape);
  append(OpKind::Cast, name, {x}, {y});
  return y;
}

}  // namespace ampkit::graph
