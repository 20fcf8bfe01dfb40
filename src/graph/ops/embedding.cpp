// The embedding ops (graph layer): Embedding (ids i32, table [V, D]) -> (y [ids..., D]) and
// EmbeddingBackward (ids, dy) -> (dtable [V, D]) — the builder's inference, the checks, the
// gradient rule and the kernel binding (ampkit/ops/embedding.hpp).
#include "ampkit/ops/embedding.hpp"
#include "ampkit/graph/builder.hpp"
#include "graph/ops/op_def.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit::graph {

ValueId Builder::embedding(ValueId ids, ValueId table, const std::string& name) {
  std::vector<std::int64_t> shape = value(ids).shape;
  const std::vector<std::int64_t> t = value(table).shape;
  shape.push_back(t.size() == 2 ? t[1] : 0);
  const ValueId y = intermediate(name + ".y", options_.compute, std::move(shape));
  append(OpKind::Embedding, name, {ids, table}, {y});
  return y;
}

namespace {

// The op sees ids flattened and the embedded rows as [rows, D]: the graph checks what that
// hides (ids of rank >= 1, the rows shaped like ids); the op's rules (embedding_forward_ /
// embedding_backward_descriptor_check) cover the rest — dtypes, the table, D, the row count.
void check_rows_like_ids(const OpCheck& c, const Value* ids, const Value* rows, const char* name) {
  c.rank_at_least(ids, "ids", 1);
  if (rows->shape.empty() || lead(rows->shape) != ids->shape)
    c.fail(name, " (%", rows->id, ") must have shape ",
           shape_text(with_last(ids->shape, rows->shape.empty() ? 0 : rows->shape.back())),
           " (ids' shape + [D]), but got ", shape_text(rows->shape));
}

void check_forward(const OpCheck& c) {
  const Value* ids = c.in(0, "ids", true);
  c.in(1, "table", true);
  check_rows_like_ids(c, ids, c.out(0, "y", true), "y");
}

void check_backward(const OpCheck& c) {
  const Value* ids = c.in(0, "ids", true);
  const Value* dy = c.in(1, "dy", true);
  c.out(0, "dtable", true);
  check_rows_like_ids(c, ids, dy, "dy");
}

void differentiate(GradientContext& d, const Node& n, int) {
  const ValueId dy = d.grad(n.outputs[0]);
  if (dy == kNoValue || !d.needs(n.inputs[1])) return;
  d.emit(OpKind::EmbeddingBackward, n.name + ".bwd", {n.inputs[0], dy}, {d.grad_slot(n.inputs[1])});
}

// views: ids flat, table, y [rows, D]
void bind_forward(BoundNode& b, const NodeOperands& o) { b.views = {o.in_flat(0), o.in(1), o.out_2d(0)}; }
std::string descriptor_forward(const BoundNode& b) {
  return embedding_forward_descriptor_check(b.views[0], b.views[1], b.views[2]);
}
void prepare_forward(BoundNode& b) { set_plan(b, ops::prepare_embedding_forward(b.views[0], b.views[1], b.views[2])); }
void run_forward(const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedEmbeddingForward>(b)); }

// views: ids flat, dy [rows, D], dtable
void bind_backward(BoundNode& b, const NodeOperands& o) { b.views = {o.in_flat(0), o.in_2d(1), o.out(0)}; }
std::string descriptor_backward(const BoundNode& b) {
  return embedding_backward_descriptor_check(b.views[0], b.views[1], b.views[2], false);
}
void prepare_backward(BoundNode& b) {
  set_plan(b, ops::prepare_embedding_backward(b.views[0], b.views[1], b.views[2], false));
}
void run_backward(const BoundNode& b, NodeRecord&) { ops::run_prepared(plan_of<ops::PreparedEmbeddingBackward>(b)); }

}  // namespace

const OpDef kEmbeddingOp{
    OpKind::Embedding,  "Embedding",     2,           1,      check_forward, differentiate, bind_forward,
    descriptor_forward, prepare_forward, run_forward, nullptr};
const OpDef kEmbeddingBackwardOp{OpKind::EmbeddingBackward,
                                 "EmbeddingBackward",
                                 2,
                                 1,
                                 check_backward,
                                 nullptr,
                                 bind_backward,
                                 descriptor_backward,
                                 prepare_backward,
                                 run_backward,
                                 nullptr};

}  // namespace ampkit::graph
