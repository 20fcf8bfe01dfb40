// The attention ops (graph layer): causal multi-head Attention (qkv [B, T, 3C]) -> (out [B, T, C],
// lse f32 [B, H, T]) and AttentionBackward (qkv, out, lse, dout) -> (dqkv) — the builder's
// inference, the checks, the gradient rule, the binding to ampkit/ops/attention.hpp (q, k, v as
// column blocks of the packed buffer) and the dump text.
#include "ampkit/ops/attention.hpp"
#include "ampkit/graph/builder.hpp"
#include "graph/ops/op_def.hpp"
#include "ops/prepared_ops.hpp"

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

// The graph packs q, k, v as column blocks of one qkv [B, T, 3C] (the op sees three [B, T, C]
// views): the graph checks the packing; the op's rules (attention_descriptor_check) cover the
// rest — dtypes, the out / lse / dout shapes, heads dividing C.
void check_qkv(const OpCheck& c, const Value* qkv) {
  c.rank(qkv, "qkv", 3);
  const std::int64_t three_c = qkv->shape[2];
  if (three_c % 3 != 0 || three_c == 0)
    c.fail("qkv (%", qkv->id, ")'s last dim (", three_c, ") must be 3 * C (q, k and v packed) with C >= 1");
}

void check_forward(const OpCheck& c) {
  check_qkv(c, c.in(0, "qkv", true));
  c.out(0, "out", true);
  c.out(1, "lse", true);
}

void check_backward(const OpCheck& c) {
  const Value* qkv = c.in(0, "qkv", true);
  check_qkv(c, qkv);
  c.in(1, "out", true);
  c.in(2, "lse", true);
  c.in(3, "dout", true);
  c.shape(c.out(0, "dqkv", true), "dqkv", qkv->shape);  // packed like qkv
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
  if (packed.data)  // null for the verifier's descriptors
    v.data = static_cast<unsigned char*>(packed.data) +
             static_cast<std::int64_t>(part) * c * static_cast<std::int64_t>(dtype_size(packed.dtype));
  return v;
}

// views: q, k, v, out, lse
void bind_forward(BoundNode& b, const NodeOperands& o) {
  const TensorView qkv = o.in(0);
  b.views = {qkv_part(qkv, 0), qkv_part(qkv, 1), qkv_part(qkv, 2), o.out(0), o.out(1)};
}

AttentionForwardArgs forward_args(const BoundNode& b) {
  AttentionForwardArgs args;
  args.q = b.views[0];
  args.k = b.views[1];
  args.v = b.views[2];
  args.out = b.views[3];
  args.lse = b.views[4];
  args.heads = b.attrs.heads;
  return args;
}

// views: q, k, v, out, lse, dout, dq, dk, dv
void bind_backward(BoundNode& b, const NodeOperands& o) {
  const TensorView qkv = o.in(0), dqkv = o.out(0);
  b.views = {qkv_part(qkv, 0), qkv_part(qkv, 1),  qkv_part(qkv, 2),  o.in(1),          o.in(2),
             o.in(3),          qkv_part(dqkv, 0), qkv_part(dqkv, 1), qkv_part(dqkv, 2)};
}

AttentionBackwardArgs backward_args(const BoundNode& b) {
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
  return args;
}

std::string descriptor_forward(const BoundNode& b) { return attention_descriptor_check(forward_args(b)); }
void prepare_forward(BoundNode& b) { set_plan(b, ops::prepare_attention_forward(forward_args(b))); }
void run_forward(const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedAttentionForward>(b)); }
std::string descriptor_backward(const BoundNode& b) { return attention_descriptor_check(backward_args(b)); }
void prepare_backward(BoundNode& b) { set_plan(b, ops::prepare_attention_backward(backward_args(b))); }
void run_backward(const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedAttentionBackward>(b)); }

void attrs(const Attributes& a, std::ostream& o) { o << " heads=" << a.heads; }

}  // namespace

const OpDef kAttentionOp{
    OpKind::Attention,  "Attention",     1,           2,    check_forward, differentiate, bind_forward,
    descriptor_forward, prepare_forward, run_forward, attrs};
const OpDef kAttentionBackwardOp{OpKind::AttentionBackward,
                                 "AttentionBackward",
                                 4,
                                 1,
                                 check_backward,
                                 nullptr,
                                 bind_backward,
                                 descriptor_backward,
                                 prepare_backward,
                                 run_backward,
                                 attrs};

}  // namespace ampkit::graph
