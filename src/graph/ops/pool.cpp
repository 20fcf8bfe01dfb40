// The pooling ops (graph layer): Pool2d (x [N, C, H, W]) -> (y [N, C, OH, OW]) and
// Pool2dBackward (x, dy) -> (dx), max or average by attrs.pool — the builder's inference, the
// checks, the gradient rule, the binding to ampkit/ops/pool2d.hpp (prepared once per node) and
// the dump text. y keeps x's dtype; the backward writes dx in x's dtype.
#include "ampkit/graph/builder.hpp"
#include "ampkit/ops/pool2d.hpp"
#include "graph/ops/op_def.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit::graph {

ValueId Builder::pool2d(ValueId x, const Pool2dParams& params, const std::string& name) {
  const Value xv = value(x);  // a copy: intermediate() adds values, which may reallocate
  std::vector<std::int64_t> shape = xv.shape;
  if (shape.size() == 4) {  // otherwise the op's check names the rank
    shape[2] = pool2d_output_size(shape[2], params.kernel_h, params.stride_h, params.pad_h);
    shape[3] = pool2d_output_size(shape[3], params.kernel_w, params.stride_w, params.pad_w);
  }
  const ValueId y = intermediate(name + ".y", xv.dtype, shape);
  Attributes attrs;
  attrs.pool = params;
  append(OpKind::Pool2d, name, {x}, {y}, attrs);
  return y;
}

namespace {

// The op's rules (pool2d_*_descriptor_check) cover rank, shapes, dtypes and the window; the graph
// adds that every slot is required.
void check_forward(const OpCheck& c) {
  c.in(0, "x", true);
  c.out(0, "y", true);
}

void check_backward(const OpCheck& c) {
  c.in(0, "x", true);
  c.in(1, "dy", true);
  c.out(0, "dx", true);
}

void differentiate(GradientContext& d, const Node& n, int) {
  const ValueId dy = d.grad(n.outputs[0]);
  if (dy == kNoValue) return;
  Attributes a;
  a.pool = n.attrs.pool;
  d.emit(OpKind::Pool2dBackward, n.name + ".bwd", {n.inputs[0], dy}, {d.grad_slot(n.inputs[0])}, a);
}

// views: x, y (forward); x, dy, dx (backward)
void bind_forward(BoundNode& b, const NodeOperands& o) { b.views = {o.in(0), o.out(0)}; }
void bind_backward(BoundNode& b, const NodeOperands& o) { b.views = {o.in(0), o.in(1), o.out(0)}; }

std::string descriptor_forward(const BoundNode& b) {
  return pool2d_forward_descriptor_check(b.views[0], b.views[1], b.attrs.pool);
}
std::string descriptor_backward(const BoundNode& b) {
  return pool2d_backward_descriptor_check(b.views[0], b.views[1], b.views[2], b.attrs.pool);
}

void prepare_forward(BoundNode& b) { set_plan(b, ops::prepare_pool2d_forward(b.views[0], b.views[1], b.attrs.pool)); }
void prepare_backward(BoundNode& b) {
  set_plan(b, ops::prepare_pool2d_backward(b.views[0], b.views[1], b.views[2], b.attrs.pool));
}

void run(const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedPool2d>(b)); }

void attrs_pool(const Attributes& a, std::ostream& o) {
  const Pool2dParams& q = a.pool;
  o << " kind=" << (q.kind == PoolKind::max ? "max" : "average") << " kernel=" << q.kernel_h << "x" << q.kernel_w
    << " stride=" << q.stride_h << "x" << q.stride_w << " pad=" << q.pad_h << "x" << q.pad_w;
}

}  // namespace

const OpDef kPool2dOp{OpKind::Pool2d,     "Pool2d",        1,   1,         check_forward, differentiate, bind_forward,
                      descriptor_forward, prepare_forward, run, attrs_pool};
const OpDef kPool2dBackwardOp{
    OpKind::Pool2dBackward, "Pool2dBackward", 2,   1,         check_backward, nullptr, bind_backward,
    descriptor_backward,    prepare_backward, run, attrs_pool};

}  // namespace ampkit::graph
