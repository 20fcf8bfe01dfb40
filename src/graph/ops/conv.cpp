// The convolution ops (graph layer): Conv2d (x [N, C, H, W], w [K, C/G, R, S], b? [K]) -> (y
// [N, K, P, Q]) and Conv2dBackward (dy, x, w) -> (dx?, dw?, db?) — the builder's inference, the
// checks, the gradient rule, the binding to ampkit/numerics/conv2d_policy.hpp and the dump text.
// The node runs the *_with_policy calls: the fp16 mode comes from the convolution's own policy,
// and the executor runs Conv2dBackward (tagged backward) under BackwardPassGuard(true), so its
// two calls get the policy's backward-only default (alt) while the forward stays original.
#include "ampkit/graph/builder.hpp"
#include "ampkit/numerics/conv2d_policy.hpp"
#include "ampkit/ops/conv2d.hpp"
#include "graph/ops/op_def.hpp"

namespace ampkit::graph {

ValueId Builder::conv2d(ValueId x, ValueId w, ValueId b, const Conv2dParams& params, const std::string& name) {
  const ValueId wc = compute_copy(w);  // an f32 master weight read in the compute dtype
  const Value xv = value(x);           // a copy: intermediate() adds values
  const Value wv = value(wc);
  std::vector<std::int64_t> shape = xv.shape;
  if (shape.size() == 4 && wv.shape.size() == 4) {  // otherwise the op's check names the rank
    shape[1] = wv.shape[0];
    shape[2] = conv2d_output_size(xv.shape[2], wv.shape[2], params.stride_h, params.pad_h, params.dilation_h);
    shape[3] = conv2d_output_size(xv.shape[3], wv.shape[3], params.stride_w, params.pad_w, params.dilation_w);
  }
  const ValueId y = intermediate(name + ".y", xv.dtype, shape);
  Attributes attrs;
  attrs.conv = params;
  append(OpKind::Conv2d, name, {x, wc, b}, {y}, attrs);
  return y;
}

namespace {

void check_forward(const OpCheck& c) {
  c.in(0, "x", true);
  c.in(1, "w", true);
  c.in(2, "b", false);
  c.out(0, "y", true);
  if (c.node().attrs.conv.layout != ConvLayout::nchw) c.fail("the graph's convolutions are NCHW");
}

void check_backward(const OpCheck& c) {
  c.in(0, "dy", true);
  c.in(1, "x", true);
  c.in(2, "w", true);
  const Value* dx = c.out(0, "dx", false);
  const Value* dw = c.out(1, "dw", false);
  const Value* db = c.out(2, "db", false);
  if (!dx && !dw && !db) c.fail("computes nothing: every output is absent");
}

void differentiate(GradientContext& d, const Node& n, int) {
  const ValueId dy = d.grad(n.outputs[0]);
  if (dy == kNoValue) return;
  Attributes a;
  a.conv = n.attrs.conv;
  d.emit(OpKind::Conv2dBackward, n.name + ".bwd", {dy, n.inputs[0], n.inputs[1]},
         {d.grad_slot(n.inputs[0]), d.grad_slot(n.inputs[1]),
          n.inputs[2] == kNoValue ? kNoValue : d.grad_slot(n.inputs[2])},
         a);
}

// views: x, w, b, y (forward); dy, x, w, dx, dw, db (backward)
void bind_forward(BoundNode& b, const NodeOperands& o) { b.views = {o.in(0), o.in(1), o.in(2), o.out(0)}; }
void bind_backward(BoundNode& b, const NodeOperands& o) {
  b.views = {o.in(0), o.in(1), o.in(2), o.out(0), o.out(1), o.out(2)};
}

Conv2dForwardArgs forward_args(const BoundNode& b) {
  return {b.views[0], b.views[1], b.views[2], b.views[3], b.attrs.conv};
}
Conv2dBackwardDataArgs data_args(const BoundNode& b) { return {b.views[0], b.views[2], b.views[3], b.attrs.conv}; }
Conv2dBackwardWeightArgs weight_args(const BoundNode& b) {
  return {b.views[0], b.views[1], b.views[4], b.views[5], false, b.attrs.conv};
}

std::string descriptor_forward(const BoundNode& b) { return conv2d_descriptor_check(forward_args(b)); }
std::string descriptor_backward(const BoundNode& b) {
  if (b.views[3].present)
    if (std::string m = conv2d_descriptor_check(data_args(b)); !m.empty()) return m;
  if (b.views[4].present || b.views[5].present) return conv2d_descriptor_check(weight_args(b));
  return {};
}

// No prepared call yet: conv2d_*_with_policy validate per run (O(1) in the data; a
// PreparedConv2d on src/ops/conv2d/conv2d_front_end.hpp's validate_conv2d is the next step).
void prepare_nothing(BoundNode&) {}

void run_forward(const BoundNode& b, NodeRecord&) { conv2d_forward_with_policy(forward_args(b)); }
void run_backward(const BoundNode& b, NodeRecord&) {
  if (b.views[3].present) conv2d_backward_data_with_policy(data_args(b));
  if (b.views[4].present || b.views[5].present) conv2d_backward_weight_with_policy(weight_args(b));
}

void attrs_conv(const Attributes& a, std::ostream& o) {
  const Conv2dParams& q = a.conv;
  o << " stride=" << q.stride_h << "x" << q.stride_w << " pad=" << q.pad_h << "x" << q.pad_w
    << " dilation=" << q.dilation_h << "x" << q.dilation_w << " groups=" << q.groups;
}

}  // namespace

const OpDef kConv2dOp{
    OpKind::Conv2d,     "Conv2d",        3,           1,         check_forward, differentiate, bind_forward,
    descriptor_forward, prepare_nothing, run_forward, attrs_conv};
const OpDef kConv2dBackwardOp{
    OpKind::Conv2dBackward, "Conv2dBackward", 3,         3, check_backward, nullptr, bind_backward, descriptor_backward,
    prepare_nothing,        run_backward,     attrs_conv};

}  // namespace ampkit::graph
