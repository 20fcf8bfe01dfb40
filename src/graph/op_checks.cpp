// Per-op signature checks of the graph verifier (graph layer): for each OpKind, which slots are
// required, which dtypes and shapes fit, and which attributes are valid. The rules mirror the
// public ops the executor calls (norm.hpp, linear.hpp, elementwise.hpp, ...), so a verified
// graph is never rejected by a kernel front end. Called by verify.cpp.
#include "graph/op_checks.hpp"

#include <cmath>
#include <sstream>

#include "ampkit/core/error.hpp"

namespace ampkit::graph {
namespace {

using Shape = std::vector<std::int64_t>;

std::string shape_text(const Shape& s) {
  std::ostringstream o;
  o << "[";
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}

Shape lead(const Shape& s) { return s.empty() ? Shape{} : Shape(s.begin(), s.end() - 1); }
std::int64_t prod(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}
Shape with_last(Shape s, std::int64_t last) {
  s.push_back(last);
  return s;
}

// One node's check: named access to its slots and failure messages naming the node.
class Check {
 public:
  Check(const Graph& g, int index) : g_(g), index_(index), n_(g.nodes[static_cast<std::size_t>(index)]) {}

  template <typename... Args>
  [[noreturn]] void fail(Args&&... parts) const {
    throw Error(detail::concat("graph: ", describe_node(g_, index_), ": ", std::forward<Args>(parts)...));
  }

  const Value* in(int slot, const char* name, bool required) const {
    return get(n_.inputs, slot, name, required, "input");
  }
  const Value* out(int slot, const char* name, bool required) const {
    return get(n_.outputs, slot, name, required, "output");
  }

  void floating(const Value* v, const char* name) const {
    if (v && !is_float_dtype(v->dtype))
      fail(name, " (%", v->id, ") must be f32, bf16 or f16, but got ", dtype_name(v->dtype));
  }
  void dtype(const Value* v, const char* name, DType want) const {
    if (v && v->dtype != want)
      fail(name, " (%", v->id, ") must be ", dtype_name(want), ", but got ", dtype_name(v->dtype));
  }
  // v's dtype must be `like`'s dtype or f32 (the "mixed" parameters of norm, bias, aux).
  void dtype_or_f32(const Value* v, const char* name, const Value* like, const char* like_name) const {
    if (v && like && v->dtype != like->dtype && v->dtype != DType::f32)
      fail(name, " (%", v->id, ") must be ", like_name, "'s dtype (", dtype_name(like->dtype), ") or f32, but got ",
           dtype_name(v->dtype));
  }
  void shape(const Value* v, const char* name, const Shape& want) const {
    if (v && v->shape != want)
      fail(name, " (%", v->id, ") must have shape ", shape_text(want), ", but got ", shape_text(v->shape));
  }
  void rank_at_least(const Value* v, const char* name, std::size_t r) const {
    if (v && v->shape.size() < r)
      fail(name, " (%", v->id, ") must have rank >= ", r, ", but got ", shape_text(v->shape));
  }
  void rank(const Value* v, const char* name, std::size_t r) const {
    if (v && v->shape.size() != r) fail(name, " (%", v->id, ") must have rank ", r, ", but got ", shape_text(v->shape));
  }
  void positive_last(const Value* v, const char* name) const {
    if (v && !v->shape.empty() && v->shape.back() < 1)
      fail(name, " (%", v->id, ") must have a last dim >= 1, but got ", shape_text(v->shape));
  }

  const Node& node() const { return n_; }

 private:
  const Value* get(const std::vector<ValueId>& slots, int slot, const char* name, bool required,
                   const char* kind) const {
    const ValueId id = slots[static_cast<std::size_t>(slot)];
    if (id == kNoValue) {
      if (required) fail("the ", kind, " ", name, " is required but absent");
      return nullptr;
    }
    return &g_.value(id);
  }

  const Graph& g_;
  int index_;
  const Node& n_;
};

void check_eps(const Check& c) {
  const float eps = c.node().attrs.eps;
  if (!(eps >= 0.0f) || !std::isfinite(eps)) c.fail("eps must be finite and >= 0, but got ", eps);
}

void check_gelu_variant(const Check& c, bool used) {
  const auto v = c.node().attrs.gelu_variant;
  if (used && v != GeluVariant::tanh && v != GeluVariant::erf)
    c.fail("gelu_variant must be tanh or erf, but got the value ", static_cast<int>(v));
}

void embedding(const Check& c) {
  const Value* ids = c.in(0, "ids", true);
  const Value* table = c.in(1, "table", true);
  const Value* y = c.out(0, "y", true);
  c.dtype(ids, "ids", DType::i32);
  c.rank_at_least(ids, "ids", 1);
  c.floating(table, "table");
  c.rank(table, "table", 2);
  c.floating(y, "y");
  c.shape(y, "y", with_last(ids->shape, table->shape[1]));
}

void linear(const Check& c) {
  const Value* x = c.in(0, "x", true);
  const Value* w = c.in(1, "w", true);
  const Value* b = c.in(2, "b", false);
  const Value* y = c.out(0, "y", true);
  const Value* aux = c.out(1, "aux", false);
  c.floating(x, "x");
  c.floating(w, "w");
  c.floating(y, "y");
  c.rank_at_least(x, "x", 1);
  c.rank(w, "w", 2);
  c.shape(w, "w", {w->shape[0], x->shape.back()});
  c.shape(y, "y", with_last(lead(x->shape), w->shape[0]));
  c.floating(b, "b");
  c.shape(b, "b", {w->shape[0]});
  c.dtype_or_f32(b, "b", y, "y");
  if (aux && !c.node().attrs.gelu) c.fail("aux (%", aux->id, ") is only produced with gelu");
  c.floating(aux, "aux");
  c.shape(aux, "aux", y->shape);
  c.dtype_or_f32(aux, "aux", y, "y");
  check_gelu_variant(c, c.node().attrs.gelu);
}

void norm(const Check& c, bool layer) {
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
  check_eps(c);
}

void unary_same_shape(const Check& c, const char* in_name, const char* out_name) {
  const Value* x = c.in(0, in_name, true);
  const Value* y = c.out(0, out_name, true);
  c.floating(x, in_name);
  c.floating(y, out_name);
  c.shape(y, out_name, x->shape);
}

void add(const Check& c) {
  const Value* a = c.in(0, "a", true);
  const Value* b = c.in(1, "b", true);
  const Value* y = c.out(0, "y", true);
  c.floating(a, "a");
  c.floating(b, "b");
  c.floating(y, "y");
  c.shape(b, "b", a->shape);
  c.shape(y, "y", a->shape);
}

// qkv [B, T, 3C] with heads dividing C; returns C.
std::int64_t check_qkv(const Check& c, const Value* qkv) {
  c.floating(qkv, "qkv");
  c.rank(qkv, "qkv", 3);
  const int heads = c.node().attrs.heads;
  if (heads < 1) c.fail("heads must be >= 1, but got ", heads);
  const std::int64_t three_c = qkv->shape[2];
  if (three_c % (3 * static_cast<std::int64_t>(heads)) != 0 || three_c == 0)
    c.fail("qkv's last dim (", three_c, ") must be 3 * heads (", heads, ") * head_dim with head_dim >= 1");
  return three_c / 3;
}

void attention(const Check& c) {
  const Value* qkv = c.in(0, "qkv", true);
  const std::int64_t ch = check_qkv(c, qkv);
  const Value* o = c.out(0, "out", true);
  const Value* lse = c.out(1, "lse", true);
  c.floating(o, "out");
  c.shape(o, "out", {qkv->shape[0], qkv->shape[1], ch});
  c.dtype(lse, "lse", DType::f32);
  c.shape(lse, "lse", {qkv->shape[0], c.node().attrs.heads, qkv->shape[1]});
}

void attention_backward(const Check& c) {
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

void softmax_ce(const Check& c, bool backward) {
  const Value* logits = c.in(0, "logits", true);
  const Value* targets = c.in(1, "targets", true);
  c.floating(logits, "logits");
  c.rank_at_least(logits, "logits", 1);
  c.positive_last(logits, "logits");
  c.dtype(targets, "targets", DType::i32);
  c.shape(targets, "targets", lead(logits->shape));
  const Shape rows{prod(lead(logits->shape))};
  if (rows[0] < 1) c.fail("logits (%", logits->id, ") must have at least one row");
  if (!backward) {
    const Value* loss = c.out(0, "loss", true);
    const Value* lse = c.out(1, "lse", true);
    c.dtype(loss, "loss", DType::f32);
    c.shape(loss, "loss", {});
    c.dtype(lse, "lse", DType::f32);
    c.shape(lse, "lse", rows);
    return;
  }
  const Value* lse = c.in(2, "lse", true);
  const Value* dloss = c.in(3, "dloss", true);
  const Value* dlogits = c.out(0, "dlogits", true);
  c.dtype(lse, "lse", DType::f32);
  c.shape(lse, "lse", rows);
  c.dtype(dloss, "dloss", DType::f32);
  c.shape(dloss, "dloss", {});
  c.floating(dlogits, "dlogits");
  c.shape(dlogits, "dlogits", logits->shape);
}

void embedding_backward(const Check& c) {
  const Value* ids = c.in(0, "ids", true);
  const Value* dy = c.in(1, "dy", true);
  const Value* dtable = c.out(0, "dtable", true);
  c.dtype(ids, "ids", DType::i32);
  c.rank_at_least(ids, "ids", 1);
  c.floating(dy, "dy");
  c.floating(dtable, "dtable");
  c.rank(dtable, "dtable", 2);
  c.shape(dy, "dy", with_last(ids->shape, dtable->shape[1]));
}

void linear_backward(const Check& c) {
  const auto& a = c.node().attrs;
  const Value* dy = c.in(0, "dy", true);
  const Value* x = c.in(1, "x", true);
  const Value* w = c.in(2, "w", true);
  const Value* below_aux = c.in(3, "below_aux", false);
  const Value* dx = c.out(0, "dx", false);
  const Value* dw = c.out(1, "dw", false);
  const Value* db = c.out(2, "db", false);
  const Value* below_db = c.out(3, "below_db", false);
  for (auto [v, name] :
       {std::pair{dy, "dy"}, std::pair{x, "x"}, std::pair{w, "w"}, std::pair{dx, "dx"}, std::pair{dw, "dw"},
        std::pair{db, "db"}, std::pair{below_aux, "below_aux"}, std::pair{below_db, "below_db"}})
    c.floating(v, name);
  c.rank_at_least(dy, "dy", 1);
  c.rank(w, "w", 2);
  const std::int64_t out = dy->shape.back(), in = w->shape[1];
  c.shape(w, "w", {out, in});
  c.shape(x, "x", with_last(lead(dy->shape), in));
  c.shape(dx, "dx", x->shape);
  c.shape(dw, "dw", w->shape);
  c.shape(db, "db", {out});
  if (dw) c.dtype_or_f32(db, "db", dw, "dw");
  if (!dx && !dw && !db) c.fail("computes nothing: dx, dw and db are all absent");
  if (a.below_gelu) {
    if (!dx) c.fail("below_gelu needs the output dx");
    if (!below_aux) c.fail("below_gelu needs the input below_aux");
    check_gelu_variant(c, true);
  } else {
    if (below_aux) c.fail("below_aux (%", below_aux->id, ") is only read with below_gelu");
    if (below_db) c.fail("below_db (%", below_db->id, ") is only produced with below_gelu");
  }
  c.shape(below_aux, "below_aux", x->shape);
  c.dtype_or_f32(below_aux, "below_aux", dx, "dx");
  c.shape(below_db, "below_db", {in});
  c.dtype_or_f32(below_db, "below_db", dx, "dx");
}

void norm_backward(const Check& c, bool layer) {
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

void gelu_backward(const Check& c) {
  const Value* x = c.in(0, "x", true);
  const Value* dy = c.in(1, "dy", true);
  const Value* dx = c.out(0, "dx", true);
  c.floating(x, "x");
  c.floating(dy, "dy");
  c.floating(dx, "dx");
  c.shape(dy, "dy", x->shape);
  c.shape(dx, "dx", x->shape);
  check_gelu_variant(c, true);
}

}  // namespace

void check_node_signature(const Graph& g, int index) {
  const Check c(g, index);
  switch (c.node().op) {
    case OpKind::Embedding: return embedding(c);
    case OpKind::Linear: return linear(c);
    case OpKind::LayerNorm: return norm(c, true);
    case OpKind::RMSNorm: return norm(c, false);
    case OpKind::Gelu: check_gelu_variant(c, true); return unary_same_shape(c, "x", "y");
    case OpKind::Add: return add(c);
    case OpKind::Attention: return attention(c);
    case OpKind::SoftmaxCrossEntropy: return softmax_ce(c, false);
    case OpKind::Cast: return unary_same_shape(c, "x", "y");
    case OpKind::Yield: return;
    case OpKind::EmbeddingBackward: return embedding_backward(c);
    case OpKind::LinearBackward: return linear_backward(c);
    case OpKind::LayerNormBackward: return norm_backward(c, true);
    case OpKind::RMSNormBackward: return norm_backward(c, false);
    case OpKind::GeluBackward: return gelu_backward(c);
    case OpKind::AttentionBackward: return attention_backward(c);
    case OpKind::SoftmaxCrossEntropyBackward: return softmax_ce(c, true);
  }
  c.fail("unknown op kind ", static_cast<int>(c.node().op));
}

}  // namespace ampkit::graph
