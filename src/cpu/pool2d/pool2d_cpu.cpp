// The pooling kernel (kernels layer): fp32 math, dtypes as template parameters, OpenMP over the
// N*C planes, each plane one thread's, so the bits never depend on the thread count. The
// backward gathers: each input element sums, in window order, the gradient of the windows that
// hold it (all of an average's, the max's where it is the window's choice) and is stored once —
// no scratch, no scatter. First entry of the pooling list (pool2d_kernels.cpp).
#include <algorithm>

#include "ampkit/core/threading.hpp"
#include "core/element.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "cpu/pool2d/pool2d_kernels.hpp"
#include "cpu/pool2d/pool2d_window.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kParallelMinElements = 1 << 14;

// Ceiling of a / b for b > 0 and any a.
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// y[pl]: [oh, ow] from x[pl]: [h, w].
template <DType X, DType O>
void forward_plane(const ops::Pool2dProblem& p, std::int64_t pl) {
  const void* x = static_cast<const char*>(p.x) + pl * p.h * p.w * static_cast<std::int64_t>(dtype_size(X));
  auto load_x = [&](std::int64_t i) { return load_as<X>(x, i); };
  const bool max = p.params.kind == PoolKind::max;
  for (std::int64_t oy = 0; oy < p.oh; ++oy)
    for (std::int64_t ox = 0; ox < p.ow; ++ox) {
      const PoolWindow win = pool_window(p, oy, ox);
      float v;
      if (max) {
        v = load_x(pool_argmax(win, p.w, load_x));
      } else {
        float sum = 0.0f;
        for (std::int64_t y = win.y0; y < win.y1; ++y)
          for (std::int64_t xx = win.x0; xx < win.x1; ++xx) sum += load_x(y * p.w + xx);
        v = sum / static_cast<float>(win.count());
      }
      store_as<O>(p.out, pl * p.oh * p.ow + oy * p.ow + ox, v);
    }
}

// dx[pl]: [h, w] from dy[pl]: [oh, ow] (and x[pl] for the max's choice).
template <DType X, DType D, DType O>
void backward_plane(const ops::Pool2dProblem& p, std::int64_t pl) {
  const Pool2dParams& q = p.params;
  const void* x = static_cast<const char*>(p.x) + pl * p.h * p.w * static_cast<std::int64_t>(dtype_size(X));
  const void* dy = static_cast<const char*>(p.dy) + pl * p.oh * p.ow * static_cast<std::int64_t>(dtype_size(D));
  auto load_x = [&](std::int64_t i) { return load_as<X>(x, i); };
  const bool max = q.kind == PoolKind::max;
  for (std::int64_t iy = 0; iy < p.h; ++iy) {
    // The windows holding row iy: oy*stride - pad <= iy < oy*stride - pad + kernel.
    const std::int64_t oy0 = std::max<std::int64_t>(0, ceil_div(iy + q.pad_h - q.kernel_h + 1, q.stride_h));
    const std::int64_t oy1 = std::min<std::int64_t>(p.oh - 1, floor_div(iy + q.pad_h, q.stride_h));
    for (std::int64_t ix = 0; ix < p.w; ++ix) {
      const std::int64_t ox0 = std::max<std::int64_t>(0, ceil_div(ix + q.pad_w - q.kernel_w + 1, q.stride_w));
      const std::int64_t ox1 = std::min<std::int64_t>(p.ow - 1, floor_div(ix + q.pad_w, q.stride_w));
      float g = 0.0f;
      for (std::int64_t oy = oy0; oy <= oy1; ++oy)
        for (std::int64_t ox = ox0; ox <= ox1; ++ox) {
          const PoolWindow win = pool_window(p, oy, ox);
          const float d = load_as<D>(dy, oy * p.ow + ox);
          if (max) {
            if (pool_argmax(win, p.w, load_x) == iy * p.w + ix) g += d;
          } else {
            g += d / static_cast<float>(win.count());
          }
        }
      store_as<O>(p.out, pl * p.h * p.w + iy * p.w + ix, g);
    }
  }
}

template <class Plane>
void over_planes(const ops::Pool2dProblem& p, Plane&& plane) {
  const std::int64_t planes = p.n * p.c;
  const bool parallel = planes > 1 && planes * p.h * p.w >= kParallelMinElements;
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (parallel)
  for (std::int64_t pl = 0; pl < planes; ++pl) plane(pl);
}

}  // namespace

void pool2d_cpu(const ops::Pool2dProblem& p) {
  visit_dtype(p.x_dtype, [&]<DType X>() {
    visit_dtype(p.out_dtype, [&]<DType O>() {
      if (!p.backward) {
        over_planes(p, [&](std::int64_t pl) { forward_plane<X, O>(p, pl); });
      } else {
        visit_dtype(p.dy_dtype,
                    [&]<DType D>() { over_planes(p, [&](std::int64_t pl) { backward_plane<X, D, O>(p, pl); }); });
      }
    });
  });
}

}  // namespace ampkit::cpu
