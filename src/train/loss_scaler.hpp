// Dynamic loss scaling for fp16 training (train layer, internal; used by the trainer): the
// state machine of trainer.hpp's LossScaleConfig. Kept apart from the trainer so the rule is
// tested on its own.
#pragma once

#include "ampkit/ops/optimizer.hpp"
#include "ampkit/train/trainer.hpp"

namespace ampkit::train {

class LossScaler {
 public:
  /// Throws ampkit::Error naming the field: initial_scale and min_scale finite and > 0 with
  /// initial >= min, growth finite and >= 1, backoff in (0, 1], growth_interval >= 1.
  explicit LossScaler(const LossScaleConfig& config);

  float scale() const { return state_.scale; }
  const LossScaleState& state() const { return state_; }
  /// Throws ampkit::Error on a scale that is not finite and > 0, or negative counts.
  void set_state(const LossScaleState& state);

  /// Records one step's outcome. Non-finite gradients: scale *= backoff (not below min_scale),
  /// good_steps = 0, skipped_steps += 1; returns false (skip the update). Finite: good_steps
  /// += 1, and when it reaches growth_interval, scale *= growth (kept finite) and good_steps =
  /// 0; returns true.
  bool update(bool grads_finite);
  /// The scaler's config as the multi-tensor step's rule (loss_scaling on; no clip, divisor 1).
  StepRule rule() const;

 private:
  LossScaleConfig config_;
  LossScaleState state_;
};

}  // namespace ampkit::train
