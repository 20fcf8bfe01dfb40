// The linear ops (graph layer): Linear (x [..., in], w [out, in], b? [out]) -> (y, aux?) with the
// fused GELU epilogue, and LinearBackward (dy, x, w, below_aux?) -> (dx?, dw?, db?, below_db?)
// with DGELU(_BGRAD) for the layer below — the builder's inference, the checks, the gradient
// rule, the binding to the view-based Linear (ampkit/layers/linear.hpp; prepared once per node,
// layers/linear_prepared.hpp) and the dump text. GEMM nodes resolve their fp16 mode at each run, on the calling thread,
// inside the executor's BackwardPassGuard for tagged nodes (DESIGN.md section 5).
#include "ampkit/layers/linear.hpp"
#include "ampkit/graph/builder.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "graph/ops/op_def.hpp"
#include "layers/linear_prepared.hpp"

namespace ampkit::graph {

ValueId Builder::linear(ValueId x, ValueId w, ValueId b, const std::string& name, bool gelu, GeluVariant variant,
                        ValueId* aux) {
  const ValueId wc = compute_copy(w);
  const std::vector<std::int64_t> ws = value(wc).shape;
  std::vector<std::int64_t> shape = lead(value(x).shape);
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

namespace {

// The op's rules (linear_descriptor_check) cover dtypes, shapes, the epilogue operands and
// gelu variants; the graph adds which slots it requires.
void check_forward(const OpCheck& c) {
  c.in(0, "x", true);
  c.in(1, "w", true);
  c.out(0, "y", true);
}

void check_backward(const OpCheck& c) {
  c.in(0, "dy", true);
  c.in(1, "x", true);
  c.in(2, "w", true);
  const Value* dx = c.out(0, "dx", false);
  const Value* dw = c.out(1, "dw", false);
  const Value* db = c.out(2, "db", false);
  if (!dx && !dw && !db) c.fail("computes nothing: dx, dw and db are all absent");
}

// A GELU Linear first takes the GELU's derivative (GeluBackward of the aux), then the GEMMs.
void differentiate(GradientContext& d, const Node& n, int index) {
  ValueId dy = d.grad(n.outputs[0]);
  if (dy == kNoValue) return;
  if (n.attrs.gelu) {
    if (n.outputs[1] == kNoValue) d.fail_node(index, "a GELU Linear needs its aux output for the backward");
    const ValueId dpre = d.new_grad(n.outputs[1]);
    Attributes a;
    a.gelu_variant = n.attrs.gelu_variant;
    d.emit(OpKind::GeluBackward, n.name + ".gelu.bwd", {n.outputs[1], dy}, {dpre}, a);
    dy = dpre;
  }
  const ValueId dx = d.grad_slot(n.inputs[0]), dw = d.grad_slot(n.inputs[1]), db = d.grad_slot(n.inputs[2]);
  if (dx == kNoValue && dw == kNoValue && db == kNoValue) return;
  d.emit(OpKind::LinearBackward, n.name + ".bwd", {dy, n.inputs[0], n.inputs[1], kNoValue}, {dx, dw, db, kNoValue});
}

// The fp16 mode for a GEMM node whose GEMM operands have the given dtypes.
Fp16Mode resolve_mode(std::initializer_list<DType> operands, NodeRecord& record) {
  record.fp16_gemm = is_fp16_gemm(operands);
  record.fp16_mode = gemm_fp16_mode_for(operands);
  return record.fp16_mode;
}

// The node's GEMMs into its record and the process-wide fp16 counters.
void add_gemm_reports(const LinearReport& report, NodeRecord& record) {
  record.gemm_calls = report.gemm_count;
  for (int i = 0; i < report.gemm_count; ++i) {
    const GemmReport& r = report.gemms[i];
    record.fp16_subnormal_inputs += r.fp16_subnormal_inputs;
    record.fp16_subnormal_outputs += r.fp16_subnormal_outputs;
    add_fp16_gemm_report(r);
  }
}

// views: x, w, bias, y, aux
void bind_forward(BoundNode& b, const NodeOperands& o) { b.views = {o.in(0), o.in(1), o.in(2), o.out(0), o.out(1)}; }

LinearForwardArgs forward_args(const BoundNode& b) {
  LinearForwardArgs args;
  args.x = b.views[0];
  args.w = b.views[1];
  args.bias = b.views[2];
  args.y = b.views[3];
  args.aux = b.views[4];
  args.gelu = b.attrs.gelu;
  args.gelu_variant = b.attrs.gelu_variant;
  return args;
}

std::string descriptor_forward(const BoundNode& b) { return linear_descriptor_check(forward_args(b)); }

// Prepared with the fp16 mode of the node's first run; a run with another mode prepares again.
void prepare_forward(BoundNode& b) {
  LinearForwardArgs args = forward_args(b);
  args.fp16_mode = gemm_fp16_mode_for({args.x.dtype, args.w.dtype});
  set_plan(b, prepare_linear_forward(args));
}

void run_forward(const BoundNode& b, NodeRecord& record) {
  const Fp16Mode mode = resolve_mode({b.views[0].dtype, b.views[1].dtype}, record);
  LinearReport report;
  run_prepared(plan_of<PreparedLinearForward>(b), mode, report);
  add_gemm_reports(report, record);
}

// views: dy, x, w, below_aux, dx, dw, db, below_db
void bind_backward(BoundNode& b, const NodeOperands& o) {
  b.views = {o.in(0), o.in(1), o.in(2), o.in(3), o.out(0), o.out(1), o.out(2), o.out(3)};
}

LinearBackwardArgs backward_args(const BoundNode& b) {
  LinearBackwardArgs args;
  args.dy = b.views[0];
  args.x = b.views[1];
  args.w = b.views[2];
  args.below_aux = b.views[3];
  args.dx = b.views[4];
  args.dw = b.views[5];
  args.db = b.views[6];
  args.below_db = b.views[7];
  args.below_gelu = b.attrs.below_gelu;
  args.below_gelu_variant = b.attrs.gelu_variant;
  return args;
}

std::string descriptor_backward(const BoundNode& b) { return linear_descriptor_check(backward_args(b)); }

void prepare_backward(BoundNode& b) {
  LinearBackwardArgs args = backward_args(b);
  args.fp16_mode = gemm_fp16_mode_for({args.dy.dtype, args.x.dtype, args.w.dtype});
  set_plan(b, prepare_linear_backward(args));
}

void run_backward(const BoundNode& b, NodeRecord& record) {
  const Fp16Mode mode = resolve_mode({b.views[0].dtype, b.views[1].dtype, b.views[2].dtype}, record);
  LinearReport report;
  run_prepared(plan_of<PreparedLinearBackward>(b), mode, report);
  add_gemm_reports(report, record);
}

void attrs_forward(const Attributes& a, std::ostream& o) {
  if (a.gelu) o << " gelu=" << gelu_variant_text(a.gelu_variant);
}
void attrs_backward(const Attributes& a, std::ostream& o) {
  if (a.below_gelu) o << " below_gelu=" << gelu_variant_text(a.gelu_variant);
}

}  // namespace

const OpDef kLinearOp{
    OpKind::Linear, "Linear",     3, 2, check_forward, differentiate, bind_forward, descriptor_forward, prepare_forward,
    run_forward,    attrs_forward};
const OpDef kLinearBackwardOp{OpKind::LinearBackward,
                              "LinearBackward",
                              4,
                              4,
                              check_backward,
                              nullptr,
                              bind_backward,
                              descriptor_backward,
                              prepare_backward,
                              run_backward,
                              attrs_backward};

}  // namespace ampkit::graph
