// The elementwise ops (graph layer): Gelu (x) -> (y), GeluBackward (x, dy) -> (dx), Add (a, b) ->
// (y) of equal shapes (residuals, gradient sums) and Cast (x) -> (y) to y's dtype — the builder's
// inference, the checks, the gradient rules, the binding to ampkit/ops/{activation,elementwise,
// convert}.hpp and the dump text.
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/graph/builder.hpp"
#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/convert.hpp"
#include "graph/ops/op_def.hpp"

namespace ampkit::graph {

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

ValueId Builder::cast(ValueId x, DType dtype, const std::string& name) {
  const ValueId y = intermediate(name, dtype, value(x).shape);
  append(OpKind::Cast, name, {x}, {y});
  return y;
}

namespace {

void unary_same_shape(const OpCheck& c, const char* in_name, const char* out_name) {
  const Value* x = c.in(0, in_name, true);
  const Value* y = c.out(0, out_name, true);
  c.floating(x, in_name);
  c.floating(y, out_name);
  c.shape(y, out_name, x->shape);
}

void check_gelu(const OpCheck& c) {
  c.gelu_variant(true);
  unary_same_shape(c, "x", "y");
}

void check_gelu_backward(const OpCheck& c) {
  const Value* x = c.in(0, "x", true);
  const Value* dy = c.in(1, "dy", true);
  const Value* dx = c.out(0, "dx", true);
  c.floating(x, "x");
  c.floating(dy, "dy");
  c.floating(dx, "dx");
  c.shape(dy, "dy", x->shape);
  c.shape(dx, "dx", x->shape);
  c.gelu_variant(true);
}

void check_add(const OpCheck& c) {
  const Value* a = c.in(0, "a", true);
  const Value* b = c.in(1, "b", true);
  const Value* y = c.out(0, "y", true);
  c.floating(a, "a");
  c.floating(b, "b");
  c.floating(y, "y");
  c.shape(b, "b", a->shape);
  c.shape(y, "y", a->shape);
}

void check_cast(const OpCheck& c) { unary_same_shape(c, "x", "y"); }

void differentiate_gelu(GradientContext& d, const Node& n, int) {
  const ValueId dy = d.grad(n.outputs[0]);
  if (dy == kNoValue) return;
  Attributes a;
  a.gelu_variant = n.attrs.gelu_variant;
  d.emit(OpKind::GeluBackward, n.name + ".bwd", {n.inputs[0], dy}, {d.grad_slot(n.inputs[0])}, a);
}

// Both addends receive dy; an addend of another dtype gets it through a Cast.
void differentiate_add(GradientContext& d, const Node& n, int) {
  const ValueId dy = d.grad(n.outputs[0]);
  if (dy == kNoValue) return;
  for (int s = 0; s < 2; ++s) {
    const ValueId x = n.inputs[static_cast<std::size_t>(s)];
    if (!d.needs(x)) continue;
    if (d.value(x).dtype == d.value(dy).dtype) {
      d.contribute(x, dy);
    } else {
      const ValueId dx = d.grad_slot(x);
      d.emit(OpKind::Cast, n.name + ".bwd.cast" + std::to_string(s), {dy}, {dx});
    }
  }
}

void differentiate_cast(GradientContext& d, const Node& n, int) {
  const ValueId dy = d.grad(n.outputs[0]);
  if (dy == kNoValue) return;
  d.emit(OpKind::Cast, n.name + ".bwd", {dy}, {d.grad_slot(n.inputs[0])});
}

void bind_unary(BoundNode& b, const NodeOperands& o) { b.views = {o.in(0), o.out(0)}; }
void bind_binary(BoundNode& b, const NodeOperands& o) { b.views = {o.in(0), o.in(1), o.out(0)}; }

void run_gelu(const BoundNode& b, NodeRecord&) { gelu_forward(b.views[0], b.views[1], b.attrs.gelu_variant); }
void run_gelu_backward(const BoundNode& b, NodeRecord&) {
  gelu_backward(b.views[0], b.views[1], b.views[2], b.attrs.gelu_variant);
}
void run_add(const BoundNode& b, NodeRecord&) { add(b.views[0], b.views[1], b.views[2]); }
void run_cast(const BoundNode& b, NodeRecord&) { convert(b.views[0], b.views[1]); }

void attrs_gelu(const Attributes& a, std::ostream& o) { o << " variant=" << gelu_variant_text(a.gelu_variant); }

}  // namespace

void emit_sum(GradientContext& d, const std::string& name, ValueId a, ValueId b, ValueId y) {
  d.emit(OpKind::Add, name, {a, b}, {y});
}

const OpDef kGeluOp{OpKind::Gelu, "Gelu", 1, 1, check_gelu, differentiate_gelu, bind_unary, run_gelu, attrs_gelu};
const OpDef kGeluBackwardOp{OpKind::GeluBackward, "GeluBackward",    2,         1, check_gelu_backward, nullptr,
                            bind_binary,          run_gelu_backward, attrs_gelu};
const OpDef kAddOp{OpKind::Add, "Add", 2, 1, check_add, differentiate_add, bind_binary, run_add, nullptr};
const OpDef kCastOp{OpKind::Cast, "Cast", 1, 1, check_cast, differentiate_cast, bind_unary, run_cast, nullptr};

}  // namespace ampkit::graph
