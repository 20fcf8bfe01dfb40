// Dynamic loss scaling (train layer): see loss_scaler.hpp. Called by trainer.cpp.
#include "train/loss_scaler.hpp"

#include <cmath>

#include "ampkit/core/error.hpp"

namespace ampkit::train {

LossScaler::LossScaler(const LossScaleConfig& c) : config_(c) {
  const char* fn = "train::Trainer loss_scale";
  if (!(c.min_scale > 0.0f) || !std::isfinite(c.min_scale))
    fail(fn, "min_scale must be finite and > 0, but got ", c.min_scale);
  if (!(c.initial_scale >= c.min_scale) || !std::isfinite(c.initial_scale))
    fail(fn, "initial_scale must be finite and >= min_scale (", c.min_scale, "), but got ", c.initial_scale);
  if (!(c.growth >= 1.0f) || !std::isfinite(c.growth)) fail(fn, "growth must be finite and >= 1, but got ", c.growth);
  if (!(c.backoff > 0.0f && c.backoff <= 1.0f)) fail(fn, "backoff must be in (0, 1], but got ", c.backoff);
  if (c.growth_interval < 1) fail(fn, "growth_interval must be >= 1, but got ", c.growth_interval);
  state_.scale = c.initial_scale;
}

void LossScaler::set_state(const LossScaleState& s) {
  const char* fn = "train::Trainer::set_loss_scale";
  if (!(s.scale > 0.0f) || !std::isfinite(s.scale)) fail(fn, "scale must be finite and > 0, but got ", s.scale);
  if (s.good_steps < 0 || s.skipped_steps < 0)
    fail(fn, "good_steps and skipped_steps must be >= 0, but got ", s.good_steps, " and ", s.skipped_steps);
  state_ = s;
}

StepRule LossScaler::rule() const {
  StepRule r;
  r.loss_scaling = true;
  r.growth = config_.growth;
  r.backoff = config_.backoff;
  r.min_scale = config_.min_scale;
  r.growth_interval = config_.growth_interval;
  return r;
}

// The rule is the multi-tensor step's (ops/optimizer.hpp), the one it runs on the device.
bool LossScaler::update(bool grads_finite) {
  apply_loss_scale_rule(state_.scale, state_.good_steps, state_.skipped_steps, rule(), grads_finite);
  return grads_finite;
}

}  // namespace ampkit::train
