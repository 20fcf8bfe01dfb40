// The pooling reference (kernels layer): plain loops over each window, double sums, one
// rounding per output; the backward scatters each window's gradient into a double plane. The
// last entry of the pooling list (pool2d_kernels.cpp); the tests compare pool2d_cpu with it.
#include <vector>

#include "core/element.hpp"
#include "cpu/pool2d/pool2d_kernels.hpp"
#include "cpu/pool2d/pool2d_window.hpp"

namespace ampkit::cpu {

// x, dx: [n*c planes, h, w]; y, dy: [n*c planes, oh, ow].
void pool2d_reference(const ops::Pool2dProblem& p) {
  const std::int64_t planes = p.n * p.c, in_plane = p.h * p.w, out_plane = p.oh * p.ow;
  const bool max = p.params.kind == PoolKind::max;
  std::vector<double> acc(p.backward ? static_cast<std::size_t>(in_plane) : 0);
  for (std::int64_t pl = 0; pl < planes; ++pl) {
    auto load_x = [&](std::int64_t i) { return load_element(p.x, p.x_dtype, pl * in_plane + i); };
    if (p.backward) std::fill(acc.begin(), acc.end(), 0.0);
    for (std::int64_t oy = 0; oy < p.oh; ++oy)
      for (std::int64_t ox = 0; ox < p.ow; ++ox) {
        const PoolWindow win = pool_window(p, oy, ox);
        const std::int64_t o = pl * out_plane + oy * p.ow + ox;
        if (!p.backward) {
          if (max) {
            store_double(p.out, p.out_dtype, o, load_x(pool_argmax(win, p.w, load_x)));
          } else {
            double sum = 0;
            for (std::int64_t y = win.y0; y < win.y1; ++y)
              for (std::int64_t x = win.x0; x < win.x1; ++x) sum += load_x(y * p.w + x);
            store_double(p.out, p.out_dtype, o, sum / static_cast<double>(win.count()));
          }
          continue;
        }
        const double g = load_element(p.dy, p.dy_dtype, o);
        if (max) {
          acc[static_cast<std::size_t>(pool_argmax(win, p.w, load_x))] += g;
        } else {
          const double share = g / static_cast<double>(win.count());
          for (std::int64_t y = win.y0; y < win.y1; ++y)
            for (std::int64_t x = win.x0; x < win.x1; ++x) acc[static_cast<std::size_t>(y * p.w + x)] += share;
        }
      }
    if (p.backward)
      for (std::int64_t i = 0; i < in_plane; ++i)
        store_double(p.out, p.out_dtype, pl * in_plane + i, acc[static_cast<std::size_t>(i)]);
  }
}

}  // namespace ampkit::cpu
