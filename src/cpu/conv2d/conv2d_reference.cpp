// The convolution reference (kernels layer): every operand element read once as the fp16 mode
// sees it (f16 subnormals counted; flushed under flush, rounded to bf16 under alt) and widened to
// double, plain loops over the definition, double accumulation, one rounding to each output
// (f16 outputs that round to a subnormal counted, and flushed under flush). The bias and the
// bias gradient use their operands as given, as the GEMM's (docs/DESIGN.md, "Bias gradients
// under the fp16 modes"). Last entry of every conv2d list, and the yardstick of the tests.
#include <cstdint>
#include <vector>

#include "core/element.hpp"
#include "cpu/conv2d/conv2d_kernels.hpp"
#include "cpu/gemm/gemm_output.hpp"
#include "cpu/math/fp16_mode_math.hpp"

namespace ampkit::cpu {
namespace {

std::vector<double> widen(const ops::Conv2dProblem& p, const void* base, std::int64_t count,
                          ops::Conv2dCounters& counters) {
  std::vector<double> out(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = load_element(base, p.dtype, i);
    if (p.dtype != DType::f16) {
      out[i] = v;
      continue;
    }
    const bool sub = gemm_math::is_f16_subnormal_input(v);
    if (sub) ++counters.fp16_subnormal_inputs;
    out[i] = gemm_math::fp16_mode_value(v, sub, p.flush, p.alt);
  }
  return out;
}

void forward(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters) {
  const std::vector<double> x = widen(p, p.x, p.n * p.c * p.h * p.w, counters);
  const std::vector<double> w = widen(p, p.wt, p.k * p.cg() * p.r * p.s, counters);
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t k = 0; k < p.k; ++k) {
      const std::int64_t c0 = k / p.kg() * p.cg();
      for (std::int64_t op = 0; op < p.p; ++op)
        for (std::int64_t oq = 0; oq < p.q; ++oq) {
          double acc = 0.0;
          for (std::int64_t cg = 0; cg < p.cg(); ++cg)
            for (std::int64_t r = 0; r < p.r; ++r) {
              const std::int64_t ih = op * p.stride_h - p.pad_h + r * p.dilation_h;
              if (ih < 0 || ih >= p.h) continue;
              for (std::int64_t s = 0; s < p.s; ++s) {
                const std::int64_t iw = oq * p.stride_w - p.pad_w + s * p.dilation_w;
                if (iw < 0 || iw >= p.w) continue;
                acc += x[p.x_index(n, c0 + cg, ih, iw)] * w[p.w_index(k, cg, r, s)];
              }
            }
          if (p.bias != nullptr) acc += load_element(p.bias, p.bias_dtype, k);
          gemm_store_rounded(p.y, p.y_index(n, k, op, oq), p.dtype, acc, p.flush, counters);
        }
    }
}

void backward_data(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters) {
  const std::vector<double> dy = widen(p, p.dy, p.n * p.k * p.p * p.q, counters);
  const std::vector<double> w = widen(p, p.wt, p.k * p.cg() * p.r * p.s, counters);
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t c = 0; c < p.c; ++c) {
      const std::int64_t g = c / p.cg(), cg = c % p.cg();
      for (std::int64_t ih = 0; ih < p.h; ++ih)
        for (std::int64_t iw = 0; iw < p.w; ++iw) {
          double acc = 0.0;
          for (std::int64_t kk = 0; kk < p.kg(); ++kk) {
            const std::int64_t k = g * p.kg() + kk;
            for (std::int64_t r = 0; r < p.r; ++r) {
              const std::int64_t th = ih + p.pad_h - r * p.dilation_h;
              if (th < 0 || th % p.stride_h != 0 || th / p.stride_h >= p.p) continue;
              for (std::int64_t s = 0; s < p.s; ++s) {
                const std::int64_t tw = iw + p.pad_w - s * p.dilation_w;
                if (tw < 0 || tw % p.stride_w != 0 || tw / p.stride_w >= p.q) continue;
                acc += dy[p.y_index(n, k, th / p.stride_h, tw / p.stride_w)] * w[p.w_index(k, cg, r, s)];
              }
            }
          }
          gemm_store_rounded(p.dx, p.x_index(n, c, ih, iw), p.dtype, acc, p.flush, counters);
        }
    }
}

void backward_weight(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters) {
  if (p.dw != nullptr) {
    const std::vector<double> dy = widen(p, p.dy, p.n * p.k * p.p * p.q, counters);
    const std::vector<double> x = widen(p, p.x, p.n * p.c * p.h * p.w, counters);
    for (std::int64_t k = 0; k < p.k; ++k) {
      const std::int64_t c0 = k / p.kg() * p.cg();
      for (std::int64_t cg = 0; cg < p.cg(); ++cg)
        for (std::int64_t r = 0; r < p.r; ++r)
          for (std::int64_t s = 0; s < p.s; ++s) {
            double acc = 0.0;
            for (std::int64_t n = 0; n < p.n; ++n)
              for (std::int64_t op = 0; op < p.p; ++op) {
                const std::int64_t ih = op * p.stride_h - p.pad_h + r * p.dilation_h;
                if (ih < 0 || ih >= p.h) continue;
                for (std::int64_t oq = 0; oq < p.q; ++oq) {
                  const std::int64_t iw = oq * p.stride_w - p.pad_w + s * p.dilation_w;
                  if (iw < 0 || iw >= p.w) continue;
                  acc += dy[p.y_index(n, k, op, oq)] * x[p.x_index(n, c0 + cg, ih, iw)];
                }
              }
            const std::int64_t i = p.w_index(k, cg, r, s);
            if (p.accumulate) acc += load_element(p.dw, p.dw_dtype, i);
            gemm_store_rounded(p.dw, i, p.dw_dtype, acc, p.flush && p.dw_dtype == DType::f16, counters);
          }
    }
  }
  if (p.dbias != nullptr) conv2d_bias_gradient(p);
}

}  // namespace

void conv2d_bias_gradient(const ops::Conv2dProblem& p) {
  for (std::int64_t k = 0; k < p.k; ++k) {
    double acc = p.accumulate ? load_element(p.dbias, p.dbias_dtype, k) : 0.0;
    for (std::int64_t n = 0; n < p.n; ++n)
      for (std::int64_t op = 0; op < p.p; ++op)
        for (std::int64_t oq = 0; oq < p.q; ++oq) acc += load_element(p.dy, p.dtype, p.y_index(n, k, op, oq));
    store_double(p.dbias, p.dbias_dtype, k, acc);
  }
}

void conv2d_reference(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters) {
  if (p.pass == ops::Conv2dPass::forward)
    forward(p, counters);
  else if (p.pass == ops::Conv2dPass::backward_data)
    backward_data(p, counters);
  else
    backward_weight(p, counters);
}

}  // namespace ampkit::cpu
