// The window arithmetic both pooling kernels share (kernels layer, internal): a window's
// in-bounds extent and the max's choice within it. Static inline; included by pool2d_cpu.cpp
// and pool2d_reference.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ops/pool2d/pool2d_kernels.hpp"

namespace ampkit::cpu {

/// The in-bounds rows [y0, y1) and columns [x0, x1) of output (oy, ox)'s window.
struct PoolWindow {
  std::int64_t y0, y1, x0, x1;
  std::int64_t count() const { return (y1 - y0) * (x1 - x0); }
};

static inline PoolWindow pool_window(const ops::Pool2dProblem& p, std::int64_t oy, std::int64_t ox) {
  const Pool2dParams& q = p.params;
  const std::int64_t ys = oy * q.stride_h - q.pad_h, xs = ox * q.stride_w - q.pad_w;
  return {std::max<std::int64_t>(ys, 0), std::min<std::int64_t>(ys + q.kernel_h, p.h), std::max<std::int64_t>(xs, 0),
          std::min<std::int64_t>(xs + q.kernel_w, p.w)};
}

/// The index (y * w + x) in `plane` of the window's first largest element, a NaN winning (the
/// first NaN). load(plane, i) reads element i as float.
template <class Load>
static inline std::int64_t pool_argmax(const PoolWindow& win, std::int64_t w, Load&& load) {
  std::int64_t best = win.y0 * w + win.x0;
  float best_v = load(best);
  for (std::int64_t y = win.y0; y < win.y1; ++y)
    for (std::int64_t x = win.x0; x < win.x1; ++x) {
      if (std::isnan(best_v)) return best;
      const float v = load(y * w + x);
      if (std::isnan(v) || v > best_v) {
        best = y * w + x;
        best_v = v;
      }
    }
  return best;
}

}  // namespace ampkit::cpu
