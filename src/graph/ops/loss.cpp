// The loss ops (graph layer): SoftmaxCrossEntropy (logits [..., classes], targets i32 [...]) ->
// (loss f32 [], lse f32 [rows]) and its backward (logits, targets, lse, dloss f32 []) ->
// (dlogits) — the builder's inference, the checks, the gradient rule and the binding to
// ampkit/ops/softmax_cross_entropy.hpp (dloss is read on the host at each run).
#include "ampkit/graph/builder.hpp"
#include "ampkit/ops/softmax_cross_entropy.hpp"
#include "graph/ops/op_def.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit::graph {

ValueId Builder::softmax_cross_entropy(ValueId logits, ValueId targets, const std::string& name) {
  const std::vector<std::int64_t> rows{prod(lead(value(logits).shape))};
  const ValueId loss = intermediate(name + ".loss", DType::f32, {});
  const ValueId lse = intermediate(name + ".lse", DType::f32, rows);
  append(OpKind::SoftmaxCrossEntropy, name, {logits, targets}, {loss, lse});
  return loss;
}

namespace {

// The op sees logits as [rows, classes], targets flattened and dloss as a host float: the graph
// checks what that hides (logits of rank >= 1, targets shaped like logits' rows, dlogits like
// logits, dloss an f32 []); the op's rules (softmax_cross_entropy_forward_ / _backward_
// descriptor_check) cover the rest — dtypes, classes, the row count, loss and lse.
void check(const OpCheck& c, bool backward) {
  const Value* logits = c.in(0, "logits", true);
  const Value* targets = c.in(1, "targets", true);
  c.rank_at_least(logits, "logits", 1);
  c.shape(targets, "targets", lead(logits->shape));
  if (!backward) {
    c.out(0, "loss", true);
    c.out(1, "lse", true);
    return;
  }
  c.in(2, "lse", true);
  const Value* dloss = c.in(3, "dloss", true);
  const Value* dlogits = c.out(0, "dlogits", true);
  c.dtype(dloss, "dloss", DType::f32);
  c.shape(dloss, "dloss", {});
  c.shape(dlogits, "dlogits", logits->shape);
}

void differentiate(GradientContext& d, const Node& n, int) {
  const ValueId dloss = d.grad(n.outputs[0]);
  if (dloss == kNoValue) return;
  d.emit(OpKind::SoftmaxCrossEntropyBackward, n.name + ".bwd", {n.inputs[0], n.inputs[1], n.outputs[1], dloss},
         {d.grad_slot(n.inputs[0])});
}

// views: logits [rows, classes], targets flat, loss, lse
void bind_forward(BoundNode& b, const NodeOperands& o) { b.views = {o.in_2d(0), o.in_flat(1), o.out(0), o.out(1)}; }
std::string descriptor_forward(const BoundNode& b) {
  return softmax_cross_entropy_forward_descriptor_check(b.views[0], b.views[1], b.views[2], b.views[3]);
}
void prepare_forward(BoundNode& b) {
  set_plan(b, ops::prepare_softmax_cross_entropy_forward(b.views[0], b.views[1], b.views[2], b.views[3]));
}
void run_forward(const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedSoftmaxCrossEntropy>(b)); }

// views: logits [rows, classes], targets flat, lse, dlogits [rows, classes]; scalar: dloss
void bind_backward(BoundNode& b, const NodeOperands& o) {
  b.views = {o.in_2d(0), o.in_flat(1), o.in(2), o.out_2d(0)};
  b.scalar = o.in_data(3);
}
// dloss is a value only at run time; 1 stands for it (the op checks that it is finite).
std::string descriptor_backward(const BoundNode& b) {
  return softmax_cross_entropy_backward_descriptor_check(b.views[0], b.views[1], b.views[2], 1.0f, b.views[3]);
}
// Prepared with dloss = 1 (validated like any); each run reads the seed and hands it over.
void prepare_backward(BoundNode& b) {
  set_plan(b, ops::prepare_softmax_cross_entropy_backward(b.views[0], b.views[1], b.views[2], 1.0f, b.views[3]));
}
void run_backward(const BoundNode& b, NodeRecord&) {
  const float dloss = read_bound_scalar(b);
  ops::run_prepared(plan_of<ops::PreparedSoftmaxCrossEntropy>(b), dloss);
}

}  // namespace

const OpDef kSoftmaxCrossEntropyOp{OpKind::SoftmaxCrossEntropy,
                                   "SoftmaxCrossEntropy",
                                   2,
                                   2,
                                   [](const OpCheck& c) { check(c, false); },
                                   differentiate,
                                   bind_forward,
                                   descriptor_forward,
                                   prepare_forward,
                                   run_forward,
                                   nullptr};
const OpDef kSoftmaxCrossEntropyBackwardOp{OpKind::SoftmaxCrossEntropyBackward,
                                           "SoftmaxCrossEntropyBackward",
                                           4,
                                           1,
                                           [](const OpCheck& c) { check(c, true); },
                                           nullptr,
                                           bind_backward,
                                           descriptor_backward,
                                           prepare_backward,
                                           run_backward,
                                           nullptr};

}  // namespace ampkit::graph
