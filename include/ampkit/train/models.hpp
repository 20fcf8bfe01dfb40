// The models of the trainer (train layer, public): their configs, an MLP block, a pre-norm
// transformer block, a small GPT and a token MLP as forward graphs (graph/builder.hpp) ending in
// the softmax cross-entropy loss, with every parameter named and its initialization recorded.
// Called by the trainer (trainer.hpp) and by users who want the graph itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/graph/builder.hpp"
#include "ampkit/graph/ir.hpp"

namespace ampkit::train {

/// A GPT-style decoder: token + position Embedding -> `layers` pre-norm transformer blocks
/// (LN -> QKV Linear -> causal Attention -> out Linear -> residual; LN -> Linear+GELU -> Linear
/// -> residual) -> final LN -> output Linear (vocab logits) -> softmax cross-entropy.
struct GptConfig {
  std::int64_t vocab = 256;   // token ids and targets lie in [0, vocab)
  std::int64_t seq_len = 64;  // tokens per sequence (the position table has seq_len rows)
  std::int64_t dim = 64;      // model width; must be a multiple of heads
  std::int64_t heads = 4;
  std::int64_t layers = 2;
  std::int64_t mlp_hidden = 0;  // 0: 4 * dim
  float norm_eps = 1e-5f;
  GeluVariant gelu = GeluVariant::tanh;
};

/// A token MLP: Embedding(vocab, dim) -> `layers` x (Linear(hidden)+GELU) -> Linear(vocab) ->
/// softmax cross-entropy over the vocabulary at every position (no mixing across positions).
struct MlpConfig {
  std::int64_t vocab = 256;
  std::int64_t seq_len = 64;
  std::int64_t dim = 64;
  std::int64_t hidden = 256;
  std::int64_t layers = 1;  // hidden layers, >= 1
  GeluVariant gelu = GeluVariant::tanh;
};

/// How a parameter starts: N(0, std) (weights, embeddings), zeros (biases, norm shifts) or ones
/// (norm gains).
enum class InitKind : std::uint8_t { normal, zeros, ones };

struct ParameterInit {
  graph::ValueId value = graph::kNoValue;
  InitKind kind = InitKind::normal;
  float std = 0.02f;  // for normal
  bool decay = true;  // weight decay applies (rank >= 2 tensors)
};

/// A model's forward graph and the values the trainer binds and reads.
struct ModelGraph {
  graph::Graph graph;
  graph::ValueId tokens = graph::kNoValue;     // i32 [batch, seq]
  graph::ValueId positions = graph::kNoValue;  // i32 [batch, seq] (GPT only): position t in every row
  graph::ValueId targets = graph::kNoValue;    // i32 [batch, seq]
  graph::ValueId logits = graph::kNoValue;     // [batch, seq, vocab], compute dtype
  graph::ValueId loss = graph::kNoValue;       // f32 []
  std::vector<ParameterInit> parameters;       // in model order
};

/// Records parameter inits while modules add parameters.
class ParameterList {
 public:
  explicit ParameterList(graph::Builder& b) : b_(b) {}
  /// A weight [out, in] (or table) ~ N(0, std), decayed.
  graph::ValueId weight(const std::string& name, std::vector<std::int64_t> shape, float std = 0.02f);
  /// A bias or norm shift (zeros) / a norm gain (ones), not decayed.
  graph::ValueId zeros(const std::string& name, std::int64_t n);
  graph::ValueId ones(const std::string& name, std::int64_t n);
  const std::vector<ParameterInit>& list() const { return list_; }

 private:
  graph::Builder& b_;
  std::vector<ParameterInit> list_;
};

/// x [..., dim] -> Linear(hidden) -> GELU -> Linear(out). Parameters `<prefix>.fc1.w/b`,
/// `<prefix>.fc2.w/b`; fc2's weight std is `out_std` (GPT-2 scales residual projections).
graph::ValueId mlp_block(graph::Builder& b, ParameterList& params, graph::ValueId x, std::int64_t hidden,
                         std::int64_t out, GeluVariant gelu, const std::string& prefix, float out_std = 0.02f);

/// Pre-norm transformer block on x [batch, seq, dim]:
///   x = x + proj(Attention(qkv(LN1(x))));  x = x + mlp(LN2(x))
/// Parameters `<prefix>.ln1.g/b`, `.attn.qkv.w/b` ([3 dim, dim]), `.attn.proj.w/b`, `.ln2.g/b`,
/// `.mlp.fc1.w/b`, `.mlp.fc2.w/b`.
graph::ValueId transformer_block(graph::Builder& b, ParameterList& params, graph::ValueId x, const GptConfig& config,
                                 const std::string& prefix);

/// The GPT of GptConfig for `batch` sequences, activations in `compute` (f32 master params).
/// Throws ampkit::Error naming the config field on a bad config.
ModelGraph build_gpt(const GptConfig& config, std::int64_t batch, DType compute);

/// The token MLP of MlpConfig. Throws ampkit::Error naming the config field on a bad config.
ModelGraph build_token_mlp(const MlpConfig& config, std::int64_t batch, DType compute);

}  // namespace ampkit::train
