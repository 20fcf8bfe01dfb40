// The normalization ops (graph layer): LayerNorm (x, gamma?, beta?) -> (y, mean, rstd), RMSNorm
// (x, gamma?) -> (y, rstd) and their backward ops — the builder's inference, the checks, the
// gradient rule, the binding to ampkit/ops/norm.hpp (prepared once per node, ops/prepared_ops.hpp)
// and the dump text. mean and rstd are f32
// [rows]; gamma / beta may be f32 beside a low-precision x.
#include "ampkit/ops/norm.hpp"
#include "ampkit/graph/builder.hpp"
#include "graph/ops/op_def.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit::graph {

ValueId Builder::layer_norm(ValueId x, ValueId gamma, ValueId beta, float eps, const std::string& name) {
  const Value xv = value(x);  // a copy: intermediate() adds values, which may reallocate
  const std::vector<std::int64_t> rows{prod(lead(xv.shape))};
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
  const std::vector<std::int64_t> rows{prod(lead(xv.shape))};
  const ValueId y = intermediate(name + ".y", xv.dtype, xv.shape);
  const ValueId rstd = intermediate(name + ".rstd", DType::f32, rows);
  Attributes attrs;
  attrs.eps = eps;
  append(OpKind::RMSNorm, name, {x, gamma}, {y, rstd}, attrs);
  return y;
}

namespace {

// The op's rules (norm_descriptor_check) cover dtypes, shapes, eps and which optional operands
// go together; the graph adds which slots it requires and that the node computes something.
void check_forward(const OpCheck& c) {
  c.in(0, "x", true);
  c.out(0, "y", true);
}

void check_backward(const OpCheck& c, bool layer) {
  c.in(0, "dy", true);
  c.in(1, "x", true);
  if (layer) c.in(2, "mean", true);
  c.in(layer ? 3 : 2, "rstd", true);
  const Value* dx = c.out(0, "dx", false);
  const Value* dgamma = c.out(1, "dgamma", false);
  const Value* dbeta = layer ? c.out(2, "dbeta", false) : nullptr;
  if (!dx && !dgamma && !dbeta) c.fail("computes nothing: every output is absent");
}

void differentiate(GradientContext& d, const Node& n, int index, bool layer) {
  const ValueId dy = d.grad(n.outputs[0]);
  if (dy == kNoValue) return;
  const ValueId mean = layer ? n.outputs[1] : kNoValue, rstd = n.outputs[layer ? 2 : 1];
  if ((layer && mean == kNoValue) || rstd == kNoValue)
    d.fail_node(index, "the backward needs the forward's mean and rstd outputs");
  const ValueId dx = d.grad_slot(n.inputs[0]), dgamma = d.grad_slot(n.inputs[1]);
  if (layer) {
    const ValueId dbeta = d.grad_slot(n.inputs[2]);
    d.emit(OpKind::LayerNormBackward, n.name + ".bwd", {dy, n.inputs[0], mean, rstd, n.inputs[1]}, {dx, dgamma, dbeta});
  } else {
    d.emit(OpKind::RMSNormBackward, n.name + ".bwd", {dy, n.inputs[0], rstd, n.inputs[1]}, {dx, dgamma});
  }
}

// views: x, gamma, y, beta, mean, rstd (absent beta / mean for RMSNorm)
void bind_forward(BoundNode& b, const NodeOperands& o, bool layer) {
  b.views = {o.in(0),
             o.in(1),
             o.out(0),
             layer ? o.in(2) : TensorView(),
             layer ? o.out(1) : TensorView(),
             o.out(layer ? 2 : 1)};
}

NormForwardArgs forward_args(const BoundNode& b) {
  NormForwardArgs args;
  args.x = b.views[0];
  args.gamma = b.views[1];
  args.eps = b.attrs.eps;
  args.y = b.views[2];
  args.beta = b.views[3];
  args.mean = b.views[4];
  args.rstd = b.views[5];
  return args;
}

// views: dy, x, dx, dgamma, mean, rstd, gamma, dbeta (absent mean / dbeta for RMSNorm)
void bind_backward(BoundNode& b, const NodeOperands& o, bool layer) {
  b.views = {o.in(0),
             o.in(1),
             o.out(0),
             o.out(1),
             layer ? o.in(2) : TensorView(),
             o.in(layer ? 3 : 2),
             o.in(layer ? 4 : 3),
             layer ? o.out(2) : TensorView()};
}

NormBackwardArgs backward_args(const BoundNode& b) {
  NormBackwardArgs args;
  args.dy = b.views[0];
  args.x = b.views[1];
  args.dx = b.views[2];
  args.dgamma = b.views[3];
  args.mean = b.views[4];
  args.rstd = b.views[5];
  args.gamma = b.views[6];
  args.dbeta = b.views[7];
  return args;
}

void attrs(const Attributes& a, std::ostream& o) { o << " eps=" << a.eps; }

}  // namespace

const OpDef kLayerNormOp{
    OpKind::LayerNorm,
    "LayerNorm",
    3,
    3,
    check_forward,
    [](GradientContext& d, const Node& n, int i) { differentiate(d, n, i, true); },
    [](BoundNode& b, const NodeOperands& o) { bind_forward(b, o, true); },
    [](const BoundNode& b) { return norm_descriptor_check(NormKind::layer, forward_args(b)); },
    [](BoundNode& b) { set_plan(b, ops::prepare_norm_forward(NormKind::layer, forward_args(b))); },
    [](const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedNormForward>(b)); },
    attrs};
const OpDef kRMSNormOp{OpKind::RMSNorm,
                       "RMSNorm",
                       2,
                       2,
                       check_forward,
                       [](GradientContext& d, const Node& n, int i) { differentiate(d, n, i, false); },
                       [](BoundNode& b, const NodeOperands& o) { bind_forward(b, o, false); },
                       [](const BoundNode& b) { return norm_descriptor_check(NormKind::rms, forward_args(b)); },
                       [](BoundNode& b) { set_plan(b, ops::prepare_norm_forward(NormKind::rms, forward_args(b))); },
                       [](const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedNormForward>(b)); },
                       attrs};
const OpDef kLayerNormBackwardOp{
    OpKind::LayerNormBackward,
    "LayerNormBackward",
    5,
    3,
    [](const OpCheck& c) { check_backward(c, true); },
    nullptr,
    [](BoundNode& b, const NodeOperands& o) { bind_backward(b, o, true); },
    [](const BoundNode& b) { return norm_descriptor_check(NormKind::layer, backward_args(b)); },
    [](BoundNode& b) { set_plan(b, ops::prepare_norm_backward(NormKind::layer, backward_args(b))); },
    [](const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedNormBackward>(b)); },
    nullptr};
const OpDef kRMSNormBackwardOp{
    OpKind::RMSNormBackward,
    "RMSNormBackward",
    4,
    2,
    [](const OpCheck& c) { check_backward(c, false); },
    nullptr,
    [](BoundNode& b, const NodeOperands& o) { bind_backward(b, o, false); },
    [](const BoundNode& b) { return norm_descriptor_check(NormKind::rms, backward_args(b)); },
    [](BoundNode& b) { set_plan(b, ops::prepare_norm_backward(NormKind::rms, backward_args(b))); },
    [](const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedNormBackward>(b)); },
    nullptr};

}  // namespace ampkit::graph
