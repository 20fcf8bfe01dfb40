// The learning-rate schedule of `ampkit train` (train layer): linear warm-up to the peak
// rate, then a cosine decay to a tenth of it at the last step (the nanoGPT / GPT-3 recipe).
#pragma once

#include <cstdint>

namespace ampkit::train {

struct LrSchedule {
  double peak = 1e-3;        // --lr
  std::int64_t warmup = 0;   // --warmup: steps of linear warm-up, < steps
  std::int64_t steps = 1;    // --steps: total optimizer steps, >= 1
  double final_ratio = 0.1;  // the rate at the last step is peak * final_ratio

  /// The rate of step `step` (0-based, in [0, steps)): peak * (step + 1) / warmup during the
  /// warm-up, then final + (peak - final) * (1 + cos(pi * p)) / 2 with p = (step - warmup) /
  /// (steps - 1 - warmup) going from 0 to 1 (the peak when that span is empty). Steps past the
  /// end keep the final rate.
  double at(std::int64_t step) const;
};

}  // namespace ampkit::train
