// Reverse-mode automatic differentiation (graph layer): walks the forward nodes backwards, emits
// one gradient node (or two, for a GELU Linear) per forward node whose output gradient exists,
// sums multiple gradient contributions with Add nodes, then inserts Yield between the forward
// and the backward nodes. Called by the trainer and tests (autodiff.hpp).
#include "ampkit/graph/autodiff.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/verify.hpp"

namespace ampkit::graph {
namespace {

class Differentiator {
 public:
  Differentiator(Graph& g, std::size_t forward_nodes) : g_(g), forward_nodes_(forward_nodes) {}

  // The summed gradient of v (emitting Add nodes for several contributions), or kNoValue.
  ValueId grad(ValueId v) {
    auto it = contributions_.find(v);
    if (it == contributions_.end() || it->second.empty()) return kNoValue;
    std::vector<ValueId>& c = it->second;
    ValueId sum = c[0];
    for (std::size_t i = 1; i < c.size(); ++i) {
      const ValueId next = new_grad(v, ".sum" + std::to_string(i));
      emit(OpKind::Add, "d:" + g_.value(v).name + ".sum" + std::to_string(i), {sum, c[i]}, {next});
      sum = next;
    }
    c.assign(1, sum);
    return sum;
  }

  void contribute(ValueId v, ValueId grad_value) { contributions_[v].push_back(grad_value); }

  // A fresh gradient value shaped like v ("d:<v's name><suffix>").
  ValueId new_grad(ValueId v, const std::string& suffix = "") {
    const Value val = g_.value(v);  // copy: add_value may reallocate
    return g_.add_value("d:" + val.name + suffix, val.dtype, val.shape, ValueKind::gradient);
  }

  // A gradient output for input v when v needs one, else kNoValue.
  ValueId grad_slot(ValueId v) {
    if (v == kNoValue || !needs_[static_cast<std::size_t>(v)]) return kNoValue;
    const ValueId d = new_grad(v);
    contribute(v, d);
    return d;
  }

  void emit(OpKind op, const std::string& name, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
            Attributes attrs = {}) {
    Node n;
    n.op = op;
    n.name = name;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attrs = attrs;
    n.attrs.backward = false;  // tag_backward sets it
    g_.nodes.push_back(std::move(n));
  }

  void mark_needs(std::span<const ValueId> also_wrt) {
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

  // Emits the gradient nodes of forward node i (a copy: emitting grows g_.nodes).
  void differentiate(std::size_t i) {
    const Node n = g_.nodes[i];
    const std::string& name = n.name;
    auto in = [&](int s) { return n.inputs[static_cast<std::size_t>(s)]; };
    auto out = [&](int s) { return n.outputs[static_cast<std::size_t>(s)]; };
    auto fail_node = [&](const char* what) {
      fail("graph autodiff", describe_node(g_, static_cast<int>(i)), ": ", what);
    };
    switch (n.op) {
      case OpKind::Linear: {
        ValueId dy = grad(out(0));
        if (dy == kNoValue) return;
        if (n.attrs.gelu) {
          if (out(1) == kNoValue) fail_node("a GELU Linear needs its aux output for the backward");
          const ValueId dpre = new_grad(out(1));
          Attributes a;
          a.gelu_variant = n.attrs.gelu_variant;
          emit(OpKind::GeluBackward, name + ".gelu.bwd", {out(1), dy}, {dpre}, a);
          dy = dpre;
        }
        const ValueId dx = grad_slot(in(0)), dw = grad_slot(in(1)), db = grad_slot(in(2));
        if (dx == kNoValue && dw == kNoValue && db == kNoValue) return;
        emit(OpKind::LinearBackward, name + ".bwd", {dy, in(0), in(1), kNoValue}, {dx, dw, db, kNoValue});
        return;
      }
      case OpKind::Gelu: {
        const ValueId dy = grad(out(0));
        if (dy == kNoValue) return;
        Attributes a;
        a.gelu_variant = n.attrs.gelu_variant;
        emit(OpKind::GeluBackward, name + ".bwd", {in(0), dy}, {grad_slot(in(0))}, a);
        return;
      }
      case OpKind::Add: {
        const ValueId dy = grad(out(0));
        if (dy == kNoValue) return;
        for (int s = 0; s < 2; ++s)
          if (needs_[static_cast<std::size_t>(in(s))]) {
            if (g_.value(in(s)).dtype == g_.value(dy).dtype)
              contribute(in(s), dy);
            else {  // the gradient takes the addend's dtype
              const ValueId d = grad_slot(in(s));
              emit(OpKind::Cast, name + ".bwd.cast" + std::to_string(s), {dy}, {d});
            }
          }
        return;
      }
      case OpKind::LayerNorm:
      case OpKind::RMSNorm: {
        const bool layer = n.op == OpKind::LayerNorm;
        const ValueId dy = grad(out(0));
        if (dy == kNoValue) return;
        const ValueId mean = layer ? out(1) : kNoValue, rstd = out(layer ? 2 : 1);
        if ((layer && mean == kNoValue) || rstd == kNoValue)
          fail_node("the backward needs the forward's mean and rstd outputs");
        const ValueId dx = grad_slot(in(0)), dgamma = grad_slot(in(1));
        if (layer) {
          const ValueId dbeta = grad_slot(in(2));
          emit(OpKind::LayerNormBackward, name + ".bwd", {dy, in(0), mean, rstd, in(1)}, {dx, dgamma, dbeta});
        } else {
          emit(OpKind::RMSNormBackward, name + ".bwd", {dy, in(0), rstd, in(1)}, {dx, dgamma});
        }
        return;
      }
      case OpKind::Attention: {
        const ValueId dout = grad(out(0));
        if (dout == kNoValue) return;
        Attributes a;
        a.heads = n.attrs.heads;
        emit(OpKind::AttentionBackward, name + ".bwd", {in(0), out(0), out(1), dout}, {grad_slot(in(0))}, a);
        return;
      }
      case OpKind::SoftmaxCrossEntropy: {
        const ValueId dloss = grad(out(0));
        if (dloss == kNoValue) return;
        emit(OpKind::SoftmaxCrossEntropyBackward, name + ".bwd", {in(0), in(1), out(1), dloss}, {grad_slot(in(0))});
        return;
      }
      case OpKind::Cast: {
        const ValueId dy = grad(out(0));
        if (dy == kNoValue) return;
        emit(OpKind::Cast, name + ".bwd", {dy}, {grad_slot(in(0))});
        return;
      }
      case OpKind::Embedding: {
        const ValueId dy = grad(out(0));
        if (dy == kNoValue || !needs_[static_cast<std::size_t>(in(1))]) return;
        emit(OpKind::EmbeddingBackward, name + ".bwd", {in(0), dy}, {grad_slot(in(1))});
        return;
      }
      default: fail_node("is not a forward op this autodiff differentiates");
    }
  }

  bool needs(ValueId v) const { return needs_[static_cast<std::size_t>(v)]; }

 private:
  Graph& g_;
  std::size_t forward_nodes_;
  std::vector<bool> needs_;
  std::map<ValueId, std::vector<ValueId>> contributions_;
};

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
  Differentiator d(g, forward_nodes);
  d.mark_needs(also_wrt);
  GradientMap map;
  map.loss_seed = g.add_value("d:" + g.value(loss).name, DType::f32, {}, ValueKind::gradient);
  d.contribute(loss, map.loss_seed);
  for (std::size_t i = forward_nodes; i-- > 0;) d.differentiate(i);

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
  Node yield;
  yield.op = OpKind::Yield;
  yield.name = "yield";
  yield.inputs.assign(saved.begin(), saved.end());
  g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(forward_nodes), std::move(yield));

  if (std::find(g.outputs.begin(), g.outputs.end(), loss) == g.outputs.end()) g.outputs.push_back(loss);
  for (const auto& [v, grad] : map.gradients)
    if (grad != kNoValue && std::find(g.outputs.begin(), g.outputs.end(), grad) == g.outputs.end())
      g.outputs.push_back(grad);
  verify(g, {.tags = false});
  return map;
}

}  // namespace ampkit::graph
