// Layer modules built on graph/builder.hpp (graph layer, public): an MLP block, a pre-norm
// transformer block, a small GPT and a token MLP as forward graphs ending in the softmax
// cross-entropy loss, with every parameter named and its initialization recorded. Called by the
// trainer (and by users who want the graph itself); see trainer.hpp for the configs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/graph/builder.hpp"
#include "ampkit/graph/ir.hpp"
#include "ampkit/graph/trainer.hpp"

namespace ampkit::graph {

/// How a parameter starts: N(0, std) (weights, embeddings), zeros (biases, norm shifts) or ones
/// (norm gains).
enum class InitKind : std::uint8_t { normal, zeros, ones };

struct ParameterInit {
  ValueId value = kNoValue;
  InitKind kind = InitKind::normal;
  float std = 0.02f;  // for normal
  bool decay = true;  // weight decay applies (rank >= 2 tensors)
};

/// A model's forward graph and the values the trainer binds and reads.
struct ModelGraph {
  Graph graph;
  ValueId tokens = kNoValue;              // i32 [batch, seq]
  ValueId positions = kNoValue;           // i32 [batch, seq] (GPT only): position t in every row
  ValueId targets = kNoValue;             // i32 [batch, seq]
  ValueId logits = kNoValue;              // [batch, seq, vocab], compute dtype
  ValueId loss = kNoValue;                // f32 []
  std::vector<ParameterInit> parameters;  // in model order
};

/// Records parameter inits while modules add parameters.
class ParameterList {
 public:
  explicit ParameterList(Builder& b) : b_(b) {}
  /// A weight [out, in] (or table) ~ N(0, std), decayed.
  ValueId weight(const std::string& name, std::vector<std::int64_t> shape, float std = 0.02f);
  /// A bias or norm shift (zeros) / a norm gain (ones), not decayed.
  ValueId zeros(const std::string& name, std::int64_t n);
  ValueId ones(const std::string& name, std::int64_t n);
  const std::vector<ParameterInit>& list() const { return list_; }

 private:
  Builder& b_;
  std::vector<ParameterInit> list_;
};

/// x [..., dim] -> Linear(hidden) -> GELU -> Linear(out). Parameters `<prefix>.fc1.w/b`,
/// `<prefix>.fc2.w/b`; fc2's weight std is `out_std` (GPT-2 scales residual projections).
ValueId mlp_block(Builder& b, ParameterList& params, ValueId x, std::int64_t hidden, std::int64_t out, GeluVariant gelu,
                  const std::string& prefix, float out_std = 0.02f);

/// Pre-norm transformer block on x [batch, seq, dim]:
///   x = x + proj(Attention(qkv(LN1(x))));  x = x + mlp(LN2(x))
/// Parameters `<prefix>.ln1.g/b`, `.attn.qkv.w/b` ([3 dim, dim]), `.attn.proj.w/b`, `.ln2.g/b`,
/// `.mlp.fc1.w/b`, `.mlp.fc2.w/b`.
ValueId transformer_block(Builder& b, ParameterList& params, ValueId x, const GptConfig& config,
                          const std::string& prefix);

/// The GPT of GptConfig for `batch` sequences, activations in `compute` (f32 master params).
/// Throws ampkit::Error naming the config field on a bad config.
ModelGraph build_gpt(const GptConfig& config, std::int64_t batch, DType compute);

/// The token MLP of MlpConfig. Throws ampkit::Error naming the config field on a bad config.
ModelGraph build_token_mlp(const MlpConfig& config, std::int64_t batch, DType compute);

}  // namespace ampkit::graph
