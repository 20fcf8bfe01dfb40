// The models (train layer): MLP block, pre-norm transformer block, GPT and token MLP as
// forward graphs, with named parameters and their initialization (models.hpp). Called by the
// trainer and tests.
#include "ampkit/train/models.hpp"

#include <cmath>

#include "ampkit/core/error.hpp"

namespace ampkit::train {

using graph::Builder;
using graph::Graph;
using graph::kNoValue;
using graph::ValueId;

namespace {

void positive(const char* fn, const char* field, std::int64_t v) {
  if (v < 1) fail(fn, field, " must be >= 1, but got ", v);
}

constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;  // keeps every product far from int64

void bounded(const char* fn, const char* field, std::int64_t v) {
  positive(fn, field, v);
  if (v > kMaxDim) fail(fn, field, " must be at most ", kMaxDim, ", but got ", v);
}

// "h3" (string concatenation written so GCC 12 raises no false -Wrestrict).
std::string indexed(const char* prefix, std::int64_t i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

}  // namespace

ValueId ParameterList::weight(const std::string& name, std::vector<std::int64_t> shape, float std) {
  const ValueId v = b_.parameter(name, std::move(shape));
  list_.push_back({v, InitKind::normal, std, true});
  return v;
}
ValueId ParameterList::zeros(const std::string& name, std::int64_t n) {
  const ValueId v = b_.parameter(name, {n});
  list_.push_back({v, InitKind::zeros, 0.0f, false});
  return v;
}
ValueId ParameterList::ones(const std::string& name, std::int64_t n) {
  const ValueId v = b_.parameter(name, {n});
  list_.push_back({v, InitKind::ones, 0.0f, false});
  return v;
}

ValueId mlp_block(Builder& b, ParameterList& params, ValueId x, std::int64_t hidden, std::int64_t out, GeluVariant gelu,
                  const std::string& prefix, float out_std) {
  const std::int64_t in = b.graph().value(x).shape.back();
  const ValueId w1 = params.weight(prefix + ".fc1.w", {hidden, in});
  const ValueId b1 = params.zeros(prefix + ".fc1.b", hidden);
  const ValueId h = b.gelu(b.linear(x, w1, b1, prefix + ".fc1"), gelu, prefix + ".act");
  const ValueId w2 = params.weight(prefix + ".fc2.w", {out, hidden}, out_std);
  const ValueId b2 = params.zeros(prefix + ".fc2.b", out);
  return b.linear(h, w2, b2, prefix + ".fc2");
}

ValueId transformer_block(Builder& b, ParameterList& params, ValueId x, const GptConfig& c, const std::string& prefix) {
  const std::int64_t d = c.dim;
  const std::int64_t hidden = c.mlp_hidden > 0 ? c.mlp_hidden : 4 * d;
  // GPT-2: residual projections start smaller, by 1/sqrt(2 * layers).
  const float proj_std = 0.02f / std::sqrt(2.0f * static_cast<float>(c.layers));
  // Parameters are made one statement at a time: their order (model order, the trainer's
  // initialization order) must not depend on the compiler's argument evaluation order.
  const ValueId ln1_g = params.ones(prefix + ".ln1.g", d);
  const ValueId ln1_b = params.zeros(prefix + ".ln1.b", d);
  const ValueId n1 = b.layer_norm(x, ln1_g, ln1_b, c.norm_eps, prefix + ".ln1");
  const ValueId qkv_w = params.weight(prefix + ".attn.qkv.w", {3 * d, d});
  const ValueId qkv_b = params.zeros(prefix + ".attn.qkv.b", 3 * d);
  const ValueId qkv = b.linear(n1, qkv_w, qkv_b, prefix + ".attn.qkv");
  const ValueId a = b.attention(qkv, static_cast<std::int32_t>(c.heads), prefix + ".attn");
  const ValueId proj_w = params.weight(prefix + ".attn.proj.w", {d, d}, proj_std);
  const ValueId proj_b = params.zeros(prefix + ".attn.proj.b", d);
  const ValueId proj = b.linear(a, proj_w, proj_b, prefix + ".attn.proj");
  const ValueId r1 = b.add(x, proj, prefix + ".res1");
  const ValueId ln2_g = params.ones(prefix + ".ln2.g", d);
  const ValueId ln2_b = params.zeros(prefix + ".ln2.b", d);
  const ValueId n2 = b.layer_norm(r1, ln2_g, ln2_b, c.norm_eps, prefix + ".ln2");
  const ValueId m = mlp_block(b, params, n2, hidden, d, c.gelu, prefix + ".mlp", proj_std);
  return b.add(r1, m, prefix + ".res2");
}

ModelGraph build_gpt(const GptConfig& c, std::int64_t batch, DType compute) {
  const char* fn = "train::build_gpt";
  bounded(fn, "batch", batch);
  bounded(fn, "vocab", c.vocab);
  bounded(fn, "seq_len", c.seq_len);
  bounded(fn, "dim", c.dim);
  bounded(fn, "heads", c.heads);
  bounded(fn, "layers", c.layers);
  if (c.mlp_hidden < 0 || c.mlp_hidden > kMaxDim)
    fail(fn, "mlp_hidden must be 0 (4 * dim) or in [1, ", kMaxDim, "], but got ", c.mlp_hidden);
  if (c.vocab > INT32_MAX) fail(fn, "vocab must fit int32, but got ", c.vocab);
  if (c.dim % c.heads != 0) fail(fn, "dim (", c.dim, ") must be a multiple of heads (", c.heads, ")");
  if (!(c.norm_eps >= 0.0f) || !std::isfinite(c.norm_eps))
    fail(fn, "norm_eps must be finite and >= 0, but got ", c.norm_eps);
  if (c.gelu != GeluVariant::tanh && c.gelu != GeluVariant::erf)
    fail(fn, "gelu must be tanh or erf, but got the value ", static_cast<int>(c.gelu));
  if (batch * c.seq_len > kMaxDim) fail(fn, "batch * seq_len must be at most ", kMaxDim);

  ModelGraph m;
  Builder b(m.graph, {compute});
  ParameterList params(b);
  m.tokens = b.input("tokens", DType::i32, {batch, c.seq_len});
  m.positions = b.input("positions", DType::i32, {batch, c.seq_len});
  m.targets = b.input("targets", DType::i32, {batch, c.seq_len});
  const ValueId tok_table = params.weight("tok_emb", {c.vocab, c.dim});
  const ValueId tok = b.embedding(m.tokens, tok_table, "tok_emb");
  const ValueId pos_table = params.weight("pos_emb", {c.seq_len, c.dim});
  const ValueId pos = b.embedding(m.positions, pos_table, "pos_emb");
  ValueId x = b.add(tok, pos, "embed");
  for (std::int64_t l = 0; l < c.layers; ++l) x = transformer_block(b, params, x, c, indexed("h", l));
  const ValueId lnf_g = params.ones("ln_f.g", c.dim);
  const ValueId lnf_b = params.zeros("ln_f.b", c.dim);
  x = b.layer_norm(x, lnf_g, lnf_b, c.norm_eps, "ln_f");
  const ValueId head_w = params.weight("head.w", {c.vocab, c.dim});
  m.logits = b.linear(x, head_w, kNoValue, "head");
  m.loss = b.softmax_cross_entropy(m.logits, m.targets, "loss");
  m.graph.outputs = {m.loss};
  m.parameters = params.list();
  return m;
}

ModelGraph build_token_mlp(const MlpConfig& c, std::int64_t batch, DType compute) {
  const char* fn = "train::build_token_mlp";
  bounded(fn, "batch", batch);
  bounded(fn, "vocab", c.vocab);
  bounded(fn, "seq_len", c.seq_len);
  bounded(fn, "dim", c.dim);
  bounded(fn, "hidden", c.hidden);
  bounded(fn, "layers", c.layers);
  if (c.vocab > INT32_MAX) fail(fn, "vocab must fit int32, but got ", c.vocab);
  if (c.gelu != GeluVariant::tanh && c.gelu != GeluVariant::erf)
    fail(fn, "gelu must be tanh or erf, but got the value ", static_cast<int>(c.gelu));
  if (batch * c.seq_len > kMaxDim) fail(fn, "batch * seq_len must be at most ", kMaxDim);

  ModelGraph m;
  Builder b(m.graph, {compute});
  ParameterList params(b);
  m.tokens = b.input("tokens", DType::i32, {batch, c.seq_len});
  m.targets = b.input("targets", DType::i32, {batch, c.seq_len});
  ValueId x = b.embedding(m.tokens, params.weight("tok_emb", {c.vocab, c.dim}), "tok_emb");
  for (std::int64_t l = 0; l < c.layers; ++l) {
    const std::string p = indexed("l", l);
    const std::int64_t in = b.graph().value(x).shape.back();
    const ValueId w = params.weight(p + ".w", {c.hidden, in});
    const ValueId bias = params.zeros(p + ".b", c.hidden);
    x = b.gelu(b.linear(x, w, bias, p), c.gelu, p + ".act");
  }
  const ValueId head_w = params.weight("head.w", {c.vocab, c.hidden});
  const ValueId head_b = params.zeros("head.b", c.vocab);
  m.logits = b.linear(x, head_w, head_b, "head");
  m.loss = b.softmax_cross_entropy(m.logits, m.targets, "loss");
  m.graph.outputs = {m.loss};
  m.parameters = params.list();
  return m;
}

}  // namespace ampkit::train
