// The step decision of the multi-tensor step (ops layer, internal): from the sum of squares of
// the gradients, the clip coefficient, the gradient scale, the skip flag and the dynamic loss
// scale update. One definition compiled for the host (src/ops/optimizer/; train::LossScaler through
// apply_loss_scale_rule) and for the device (src/cuda/optimizer/), so the rule and its bits are the same on both:
// double and float operations without any multiply-add pair (nothing for a compiler to contract).
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "ampkit/ops/optimizer.hpp"
#include "core/host_device.hpp"

namespace ampkit::ops {

#if defined(__CUDA_ARCH__)
__device__ inline bool step_isfinite(float x) { return ::isfinite(x); }
__device__ inline double step_sqrt(double x) { return ::sqrt(x); }  // IEEE, rounded once
#else
inline bool step_isfinite(float x) { return std::isfinite(x); }
inline double step_sqrt(double x) { return std::sqrt(x); }
#endif

/// The loss scaler's rule (train/loss_scaler.hpp): non-finite: scale = max(min_scale, scale *
/// backoff), good_steps = 0, skipped_steps += 1; finite: good_steps += 1 and at growth_interval
/// scale *= growth when the result is finite and <= FLT_MAX / 2, good_steps = 0.
AMPKIT_HOST_DEVICE inline void update_loss_scale(float& scale, std::int64_t& good_steps, std::int64_t& skipped_steps,
                                                 const StepRule& rule, bool finite) {
  if (!finite) {
    const float backed = scale * rule.backoff;
    scale = backed > rule.min_scale ? backed : rule.min_scale;  // std::max(min_scale, backed)
    good_steps = 0;
    skipped_steps += 1;
    return;
  }
  if (++good_steps >= rule.growth_interval) {
    const float grown = scale * rule.growth;
    if (step_isfinite(grown) && grown <= FLT_MAX / 2) scale = grown;
    good_steps = 0;
  }
}

/// The decision of one step (MultiTensorStep::decide) from the gradients' norm as read (sqrt of
/// the sum of squares in global_grad_norm's order) and their finiteness.
AMPKIT_HOST_DEVICE inline void decide_step(StepScalars& s, const StepRule& rule, double raw_norm, bool finite) {
  // seed * divisor: a power of two (or 1) times micro-batches x ranks, exact in double, so this
  // is the trainer's 1 / (seed * micro * ranks) bit for bit.
  const double unscale = 1.0 / (static_cast<double>(s.seed) * rule.divisor);
  s.used_seed = s.seed;
  s.grad_norm = raw_norm * unscale;
  if (rule.loss_scaling) update_loss_scale(s.loss_scale, s.good_steps, s.skipped_steps, rule, finite);
  if (!finite) {
    s.skip = 1;
  } else {
    const double clip = rule.clip_norm;
    const double coef = clip > 0.0 && s.grad_norm > clip ? clip / (s.grad_norm + 1e-6) : 1.0;
    s.grad_scale = static_cast<float>(unscale * coef);
    s.skip = 0;
    s.steps += 1;
  }
  s.seed = rule.loss_scaling ? s.loss_scale : 1.0f;
}

}  // namespace ampkit::ops
