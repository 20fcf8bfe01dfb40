// The warm-up + cosine learning-rate schedule of `ampkit train` (train layer).
#include "ampkit/train/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ampkit::train {

double LrSchedule::at(std::int64_t step) const {
  const double final_rate = peak * final_ratio;
  if (step < 0) step = 0;
  if (step < warmup) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const std::int64_t span = steps - 1 - warmup;
  if (span <= 0) return peak;  // no step after the warm-up but the last: nothing to decay
  const double p = std::min(1.0, static_cast<double>(step - warmup) / static_cast<double>(span));
  return final_rate + (peak - final_rate) * 0.5 * (1.0 + std::cos(std::numbers::pi * p));
}

}  // namespace ampkit::train
