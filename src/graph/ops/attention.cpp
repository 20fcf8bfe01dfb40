// The attention ops (graph layer): causal multi-head Attention (qkv [B, T, 3C]) -> (out [B, T, C],
// lse f32 [B, H, T]) and AttentionBackward (qkv, out, lse, dout) -> (dqkv) — the builder's
// inference, the checks, the gradient rule, the binding to ampkit/ops/attention.hpp (q, k, v as
// column blocks of the packed buffer) and the dump text.
#include "ampkit/ops/attention.hpp"
#include "ampkit/graph/builder.hpp"
#include "graph/ops/op_def.hpp"

namespace ampkit::graph {

ValueId Builder::attention(ValueId qkv, std::int32_t heads, const std::string& name) {
  const std::vector<std::int64_t> s = value(qkv).shape;  // a copy: intermediate() may reallocate
  const bool ok = s.size() == 3;
  const ValueId out =
      intermediate(name + ".out", options_.compute, ok ? std::vector<std::int64_t>{s[0], s[1], s[2] / 3} : s);
  const ValueId lse = intermediate(name + ".lse", DType::f32, ok ? std::vector<std::int64_t>{s[0], heads, s[1]} : s);
  Attributes attrs;
  attrs.heads = heads;
  append(OpKind::Attention, name, {qkv}, {out, lse}, attrs);
  return out;
}

namespace {

// qkv [B, T, 3C] with heads dividing C; returns C.
std::int64_t check_qkv(const OpCheck& c, const Value* qkv) {
  c.floating(qkv, "qkv");
  c.rank(qkv, "qkv", 3);
  const int heads = c.node().attrs.heads;
  if (heads < 1) c.fail("heads must be >= 1, but got ", heads);
  const std::int64_t three_c = qkv->shape[2];
  if (three_c % (3 * static_cast<std::int64_t>(heads)) != 0 || three_c == 0)
    c.fail("qkv's last dim (", three_c, ") must be 3 * heads (", heads, ") * head_dim with head_dim >= 1");
  return three_c / 3;
}

void check_forward(const OpCheck& c) {
  const Value* qkv = c.in(0, "qkv", true);
  const std::int64_t ch = check_qkv(c, qkv);
  const Value* o = c.out(0, "out", true);
  const Value* lse = c.out(1, "lse", true);
  c.floating(o, "out");
  c.shape(o, "out", {qkv->shape[0], qkv->shape[1], ch});
  c.dtype(lse, "lse", DType::f32);
  c.shape(lse, "lse", {qkv->shape[0], c.node().attrs.heads, qkv->shape[1]});
}

void check_backward(const OpCheck& c) {
  const Value* qkv = c.in(0, "qkv", true);
  const std::int64_t ch = check_qkv(c, qkv);
  const Shape out_shape{qkv->shape[0], qkv->shape[1], ch};
  const Value* o = c.in(1, "out", true);
  const Value* lse = c.in(2, "lse", true);
  const Value* dout = c.in(3, "dout", true);
  const Value* dqkv = c.out(0, "dqkv", true);
  c.floating(o, "out");
  c.shape(o, "out", out_shape);
  c.dtype(lse, "lse", DType::f32);
  c.shape(lse, "lse", {qkv->shape[0], c.node().attrs.heads, qkv->shape[1]});
  c.floating(dout, "dout");
  c.shape(dout, "dout", out_shape);
  c.floating(dqkv, "dqkv");
  c.shape(dqkv, "dqkv", qkv->shape);
}

void differentiate(GradientContext& d, const Node& n, int) {
  const ValueId dout = d.grad(n.outputs[0]);
  if (dout == kNoValue) return;
  Attributes a;
  a.heads = n.attrs.heads;
  d.emit(OpKind::AttentionBackward, n.name + ".bwd", {n.inputs[0], n.outputs[0], n.outputs[1], dout},
         {d.grad_slot(n.inputs[0])}, a);
}

// Column block `part` (0: q, 1: k, 2: v) of a packed [B, T, 3C] buffer: [B, T, C] with the
// packed row strides.
TensorView qkv_part(const TensorView& packed, int part) {
  TensorView v = packed;
  const std::int64_t c = packed.shape[2] / 3;
  v.shape[2] = c;
  v.data = static_cast<unsigned char*>(packed.data) +
           static_cast<std::int64_t>(part) * c * static_cast<std::int64_t>(dtype_size(packed.dtype));
  return v;
}

// views: q, k, v, out, lse
void bind_forward(BoundNode& b, const NodeOperands& o) {
  const TensorView qkv = o.in(0);
  b.views = {qkv_part(qkv, 0), qkv_part(qkv, 1), qkv_part(qkv, 2), o.out(0), o.out(1)};
}

void run_forward(const BoundNode& b, NodeRecord&) {
  AttentionForwardArgs args;
  args.q = b.views[0];
  args.k = b.views[1];
  args.v = b.views[2];
  args.out = b.views[3];
  args.lse = b.views[4];
  args.heads = b.attrs.heads;
  attention_forward(args);
}

// views: q, k, v, out, lse, dout, dq, dk, dv
void bind_backward(BoundNode& b, const NodeOperands& o) {
  const TensorView qkv = o.in(0), dqkv = o.out(0);
  b.views = {qkv_part(qkv, 0), qkv_part(qkv, 1),  qkv_part(qkv, 2),  o.in(1),          o.in(2),
             o.in(3),          qkv_part(dqkv, 0), qkv_part(dqkv, 1), qkv_part(dqkv, 2)};
}

void run_backward(const BoundNode& b, NodeRecord&) {
  AttentionBackwardArgs args;
  args.q = b.views[0];
  args.k = b.views[1];
  args.v = b.views[2];
  args.out = b.views[3];
  args.lse = b.views[4];
  args.dout = b.views[5];
  args.dq = b.views[6];
  args.dk = b.views[7];
  args.dv = b.views[8];
  args.heads = b.attrs.heads;
  attention_backward(args);
}

void attrs(const Attributes& a, std::ostream& o) { o << " heads=" << a.heads; }

}  // namespace

const OpDef kAttentionOp{OpKind::Attention, "Attention",  1,           2,    check_forward,
                         differentiate,     bind_forward, run_forward, attrs};
const OpDef kAttentionBackwardOp{
    OpKind::AttentionBackward, "AttentionBackward", 4, 1, check_backward, nullptr, bind_backward, run_backward, attrs};

}  // namespace ampkit::graph
