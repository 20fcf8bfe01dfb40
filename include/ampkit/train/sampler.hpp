// Sampling of `ampkit train` (train layer): picks the next character from a logits
// vector — greedy at temperature 0, else softmax(logits / temperature) restricted to the top-k
// logits, drawn with the seeded SplitMix64, so a seed gives the same text on every platform.
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/train/rng.hpp"

namespace ampkit::train {

class Sampler {
 public:
  /// temperature >= 0 (0: greedy); top_k >= 0 (0: every token).
  Sampler(double temperature, std::int64_t top_k, std::uint64_t seed);

  /// The index of the sampled logit. Ties are broken by the lower index. -inf logits are never
  /// drawn. Throws ampkit::Error when `logits` is empty or holds NaN or +inf (a diverged model).
  std::int32_t next(std::span<const float> logits);

 private:
  double temperature_;
  std::int64_t top_k_;
  SplitMix64 rng_;
};

}  // namespace ampkit::train
