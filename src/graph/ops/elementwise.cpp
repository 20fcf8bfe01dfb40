// The elementwise ops (graph layer): Gelu (x) -> (y), GeluBackward (x, dy) -> (dx), Add (a, b) ->
// (y) of equal shapes (residuals, gradient sums) and Cast (x) -> (y) to y's dtype — the builder's
// inference, the checks, the gradient rules, the binding to ampkit/ops/{activation,elementwise,
// convert}.hpp and the dump text.
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/graph/builder.hpp"
#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/convert.hpp"
#include "graph/ops/op_def.hpp"
#include "ops/prepared_ops.hpp"

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

// The ops' rules (gelu_forward_/gelu_backward_/add_/convert_descriptor_check) cover dtypes,
// shapes and the GELU variant; the graph adds that every slot is required.
void check_unary(const OpCheck& c) {
  c.in(0, "x", true);
  c.out(0, "y", true);
}

void check_gelu_backward(const OpCheck& c) {
  c.in(0, "x", true);
  c.in(1, "dy", true);
  c.out(0, "dx", true);
}

void check_add(const OpCheck& c) {
  c.in(0, "a", true);
  c.in(1, "b", true);
  c.out(0, "y", true);
}

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

std::string descriptor_gelu(const BoundNode& b) {
  return gelu_forward_descriptor_check(b.views[0], b.views[1], b.attrs.gelu_variant);
}
std::string descriptor_gelu_backward(const BoundNode& b) {
  return gelu_backward_descriptor_check(b.views[0], b.views[1], b.views[2], b.attrs.gelu_variant);
}
std::string descriptor_add(const BoundNode& b) { return add_descriptor_check(b.views[0], b.views[1], b.views[2]); }
std::string descriptor_cast(const BoundNode& b) { return convert_descriptor_check(b.views[0], b.views[1]); }

void prepare_gelu(BoundNode& b) {
  set_plan(b, ops::prepare_gelu_forward(b.views[0], b.views[1], b.attrs.gelu_variant));
}
void prepare_gelu_backward(BoundNode& b) {
  set_plan(b, ops::prepare_gelu_backward(b.views[0], b.views[1], b.views[2], b.attrs.gelu_variant));
}
void prepare_add(BoundNode& b) { set_plan(b, ops::prepare_add(b.views[0], b.views[1], b.views[2])); }
void prepare_cast(BoundNode& b) { set_plan(b, ops::prepare_convert(b.views[0], b.views[1])); }

void run_gelu(const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedGelu>(b)); }
void run_add(const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedElementwise>(b)); }
void run_cast(const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedConvert>(b)); }

void attrs_gelu(const Attributes& a, std::ostream& o) { o << " variant=" << gelu_variant_text(a.gelu_variant); }

}  // namespace

void emit_sum(GradientContext& d, const std::string& name, ValueId a, ValueId b, ValueId y) {
  d.emit(OpKind::Add, name, {a, b}, {y});
}

const OpDef kGeluOp{OpKind::Gelu,    "Gelu",       1,        1,         check_unary, differentiate_gelu, bind_unary,
                    descriptor_gelu, prepare_gelu, run_gelu, attrs_gelu};
const OpDef kGeluBackwardOp{OpKind::GeluBackward,  "GeluBackward", 2,           1,
                            check_gelu_backward,   nullptr,        bind_binary, descriptor_gelu_backward,
                            prepare_gelu_backward, run_gelu,       attrs_gelu};
const OpDef kAddOp{OpKind::Add, "Add",          2,           1,       check_add, differentiate_add,
                   bind_binary, descriptor_add, prepare_add, run_add, nullptr};
const OpDef kCastOp{OpKind::Cast,    "Cast",       1,        1,      check_unary, differentiate_cast, bind_unary,
                    descriptor_cast, prepare_cast, run_cast, nullptr};

}  // namespace ampkit::graph
