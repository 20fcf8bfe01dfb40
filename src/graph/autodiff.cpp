// Reverse-mode automatic differentiation (graph layer): walks the forward nodes backwards and
// applies each op's gradient rule (its OpDef's differentiate, src/graph/ops/) to the nodes whose
// output gradient exists, sums multiple gradient contributions with Add nodes (GradientContext),
// then inserts Yield between the forward and the backward nodes. Called by the trainer and tests.
#include "ampkit/graph/autodiff.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/verify.hpp"
#include "graph/ops/op_def.hpp"

namespace ampkit::graph {
ValueId GradientContext::grad(ValueId v) {
  auto it = contributions_.find(v);
  if (it == contributions_.end() || it->second.empty()) return kNoValue;
  std::vector<ValueId>& c = it->second;
  ValueId sum = c[0];
  for (std::size_t i = 1; i < c.size(); ++i) {
    const ValueId next = new_grad(v, ".sum" + std::to_string(i));
    emit_sum(*this, "d:" + g_.value(v).name + ".sum" + std::to_string(i), sum, c[i], next);
    sum = next;
  }
  c.assign(1, sum);
  return sum;
}

ValueId GradientContext::new_grad(ValueId v, const std::string& suffix) {
  const Value val = g_.value(v);  // copy: add_value may reallocate
  return g_.add_value("d:" + val.name + suffix, val.dtype, val.shape, ValueKind::gradient);
}

ValueId GradientContext::grad_slot(ValueId v) {
  if (v == kNoValue || !needs_[static_cast<std::size_t>(v)]) return kNoValue;
  const ValueId d = new_grad(v);
  contribute(v, d);
  return d;
}

void GradientContext::emit(OpKind op, const std::string& name, std::vector<ValueId> inputs,
                           std::vector<ValueId> outputs, Attributes attrs) {
  attrs.backward = false;  // tag_backward sets it
  g_.nodes.push_back(make_node(op, name, std::move(inputs), std::move(outputs), attrs));
}

void GradientContext::fail_node(int index, const char* what) const {
  fail("graph autodiff", describe_node(g_, index), ": ", what);
}

void GradientContext::mark_needs(std::span<const ValueId> also_wrt) {
  needs_.assign(g_.values.size(), false);
  for (const Value& v : g_.values)
    if (v.kind == ValueKind::parameter && is_float_dtype(v.dtype)) needs_[static_cast<std::size_t>(v.id)] = true;
  for (ValueId v : also_wrt)
    if (is_float_dtype(g_.value(v).dtype)) needs_[static_cast<std::size_t>(v)] = true;
  for (std::size_t i = 0; i < forward_nodes_; ++i) {
    const Node& n = g_.nodes[i];
    bool any = false;
    for (ValueId v : n.inputs) any = any || (v != kNoValue && needs_[static_cast<std::size_t>(v)]);
    if (!any) continue;
    for (ValueId v : n.outputs)
      if (v != kNoValue && is_float_dtype(g_.value(v).dtype)) needs_[static_cast<std::size_t>(v)] = true;
  }
}

namespace {

// Emits the gradient nodes of forward node i by its op's rule (a copy: emitting grows g.nodes).
void differentiate(GradientContext& d, const Graph& g, std::size_t i) {
  const Node n = g.nodes[i];
  const OpDef* def = find_op_def(n.op);
  if (!def || !def->differentiate) d.fail_node(static_cast<int>(i), "is not a forward op this autodiff differentiates");
  def->differentiate(d, n, static_cast<int>(i));
}

}  // namespace

ValueId GradientMap::of(ValueId v) const {
  for (const auto& [value, gradient] : gradients)
    if (value == v) return gradient;
  return kNoValue;
}

GradientMap build_backward(Graph& g, ValueId loss, std::span<const ValueId> also_wrt) {
  if (g.yield_index() >= 0) fail("graph autodiff", "the graph already has a Yield node");
  verify(g);
  const Value& lv = g.value(loss);
  if (lv.dtype != DType::f32 || !lv.shape.empty() || g.producer(loss) < 0)
    fail("graph autodiff", "the loss %", loss, " '", lv.name, "' must be an f32 [] value produced by a node");
  for (ValueId v : also_wrt) (void)g.value(v);

  const std::size_t forward_nodes = g.nodes.size();
  GradientContext d(g, forward_nodes);
  d.mark_needs(also_wrt);
  GradientMap map;
  map.loss_seed = g.add_value("d:" + g.value(loss).name, DType::f32, {}, ValueKind::gradient);
  d.contribute(loss, map.loss_seed);
  for (std::size_t i = forward_nodes; i-- > 0;) differentiate(d, g, i);

  std::set<ValueId> wanted(also_wrt.begin(), also_wrt.end());
  for (const Value& v : g.values)
    if (v.kind == ValueKind::parameter) wanted.insert(v.id);
  for (ValueId v : wanted) {
    if (!is_float_dtype(g.value(v).dtype)) continue;
    const ValueId grad = d.needs(v) ? d.grad(v) : kNoValue;
    map.gradients.emplace_back(v, grad);
  }

  // Yield: the loss and every forward value a backward node reads, in id order.
  std::set<ValueId> saved{loss};
  for (std::size_t i = forward_nodes; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].inputs)
      if (v != kNoValue && g.value(v).kind != ValueKind::gradient) saved.insert(v);
  g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(forward_nodes),
                 make_yield(std::vector<ValueId>(saved.begin(), saved.end())));

  if (std::find(g.outputs.begin(), g.outputs.end(), loss) == g.outputs.end()) g.outputs.push_back(loss);
  for (const auto& [v, grad] : map.gradients)
    if (grad != kNoValue && std::find(g.outputs.begin(), g.outputs.end(), grad) == g.outputs.end())
      g.outputs.push_back(grad);
  verify(g, {.tags = false});
  return map;
}

}  // namespace ampkit::graph
