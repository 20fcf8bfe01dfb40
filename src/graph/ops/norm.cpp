// The normalization ops (graph layer): LayerNorm (x, gamma?, beta?) -> (y, mean, rstd), RMSNorm
// (x, gamma?) -> (y, rstd) and their backward ops — the builder's inference, the checks, the
// gradient rule, the binding to ampkit/ops/norm.hpp and the dump text. mean and rstd are f32
// [rows]; gamma / beta may be f32 beside a low-precision x.
#include "ampkit/ops/norm.hpp"
#include "ampkit/graph/builder.hpp"
#include "graph/ops/op_def.hpp"

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

void check_forward(const OpCheck& c, bool layer) {
  const Value* x = c.in(0, "x", true);
  const Value* gamma = c.in(1, "gamma", false);
  const Value* beta = layer ? c.in(2, "beta", false) : nullptr;
  const Value* y = c.out(0, "y", true);
  const Value* mean = layer ? c.out(1, "mean", false) : nullptr;
  const Value* rstd = c.out(layer ? 2 : 1, "rstd", false);
  c.floating(x, "x");
  c.rank_at_least(x, "x", 1);
  c.positive_last(x, "x");
  const Shape n{x->shape.back()}, rows{prod(lead(x->shape))};
  for (auto [v, name] : {std::pair{gamma, "gamma"}, std::pair{beta, "beta"}}) {
    c.floating(v, name);
    c.shape(v, name, n);
    c.dtype_or_f32(v, name, x, "x");
  }
  c.dtype(y, "y", x->dtype);
  c.shape(y, "y", x->shape);
  for (auto [v, name] : {std::pair{mean, "mean"}, std::pair{rstd, "rstd"}}) {
    c.dtype(v, name, DType::f32);
    c.shape(v, name, rows);
  }
  c.eps();
}

void check_backward(const OpCheck& c, bool layer) {
  const Value* dy = c.in(0, "dy", true);
  const Value* x = c.in(1, "x", true);
  const Value* mean = layer ? c.in(2, "mean", true) : nullptr;
  const Value* rstd = c.in(layer ? 3 : 2, "rstd", true);
  const Value* gamma = c.in(layer ? 4 : 3, "gamma", false);
  const Value* dx = c.out(0, "dx", false);
  const Value* dgamma = c.out(1, "dgamma", false);
  const Value* dbeta = layer ? c.out(2, "dbeta", false) : nullptr;
  c.floating(dy, "dy");
  c.rank_at_least(dy, "dy", 1);
  c.positive_last(dy, "dy");
  c.dtype(x, "x", dy->dtype);
  c.shape(x, "x", dy->shape);
  const Shape n{dy->shape.back()}, rows{prod(lead(dy->shape))};
  for (auto [v, name] : {std::pair{mean, "mean"}, std::pair{rstd, "rstd"}}) {
    c.dtype(v, name, DType::f32);
    c.shape(v, name, rows);
  }
  c.dtype(dx, "dx", dy->dtype);
  c.shape(dx, "dx", dy->shape);
  for (auto [v, name] : {std::pair{gamma, "gamma"}, std::pair{dgamma, "dgamma"}, std::pair{dbeta, "dbeta"}}) {
    c.floating(v, name);
    c.shape(v, name, n);
    c.dtype_or_f32(v, name, dy, "dy");
  }
  if (dgamma && !gamma) c.fail("dgamma needs the input gamma");
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

const OpDef kLayerNormOp{OpKind::LayerNorm,
                         "LayerNorm",
                         3,
                         3,
                         [](const OpCheck& c) { check_forward(c, true); },
                         [](GradientContext& d, const Node& n, int i) { differentiate(d, n, i, true); },
                         [](BoundNode& b, const NodeOperands& o) { bind_forward(b, o, true); },
                         [](const BoundNode& b, NodeRecord&) { layer_norm_forward(forward_args(b)); },
                         attrs};
const OpDef kRMSNormOp{OpKind::RMSNorm,
                       "RMSNorm",
                       2,
                       2,
                       [](const OpCheck& c) { check_forward(c, false); },
                       [](GradientContext& d, const Node& n, int i) { differentiate(d, n, i, false); },
                       [](BoundNode& b, const NodeOperands& o) { bind_forward(b, o, false); },
                       [](const BoundNode& b, NodeRecord&) { rms_norm_forward(forward_args(b)); },
                       attrs};
const OpDef kLayerNormBackwardOp{OpKind::LayerNormBackward,
                                 "LayerNormBackward",
                                 5,
                                 3,
                                 [](const OpCheck& c) { check_backward(c, true); },
                                 nullptr,
                                 [](BoundNode& b, const NodeOperands& o) { bind_backward(b, o, true); },
                                 [](const BoundNode& b, NodeRecord&) { layer_norm_backward(backward_args(b)); },
                                 nullptr};
const OpDef kRMSNormBackwardOp{OpKind::RMSNormBackward,
                               "RMSNormBackward",
                               4,
                               2,
                               [](const OpCheck& c) { check_backward(c, false); },
                               nullptr,
                               [](BoundNode& b, const NodeOperands& o) { bind_backward(b, o, false); },
                               [](const BoundNode& b, NodeRecord&) { rms_norm_backward(backward_args(b)); },
                               nullptr};

}  // namespace ampkit::graph
