// The direct convolution (kernels layer): the portable fast entry of the three lists. Operands
// are widened once to fp32 as the fp16 mode sees them (the reference's rule: f16 subnormals
// counted, flushed under flush, rounded to bf16 under alt) into channel-contiguous panels
// (x as [N, H, W, C], w as [K, R, S, C/G]; for the backward-data pass w transposed to
// [C, R, S, K/G]; for the backward-weight pass one im2col row of length N*P*Q per (c, r, s),
// built on the fly, never the whole matrix), then every output element is one fp32 dot product
// in 8 interleaved partial sums over the contiguous channels, combined in a fixed order. Each
// output is computed by one thread in that order, so the bits do not depend on the thread count.
// Outputs are rounded once (f16 subnormal outputs counted, flushed under flush); the bias in
// fp32 after the sum, the bias gradient in double over the dy values as given (the reference's
// order of magnitude: exact to fp32's rounding for the lengths that occur).
#include <cstdint>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "core/element.hpp"
#include "cpu/conv2d/conv2d_kernels.hpp"
#include "cpu/gemm/gemm_output.hpp"
#include "cpu/math/fp16_mode_math.hpp"

namespace ampkit::cpu {
namespace {

constexpr int kLanes = 8;

// v as the mode sees it (f16 only), counting subnormals.
inline float mode_value(const ops::Conv2dProblem& p, float v, std::int64_t& subnormals) {
  if (p.dtype != DType::f16) return v;
  const bool sub = gemm_math::is_f16_subnormal_input(v);
  subnormals += sub ? 1 : 0;
  return gemm_math::fp16_mode_value(v, sub, p.flush, p.alt);
}

// Fixed-order fp32 dot product of n elements: 8 interleaved partial sums, a pairwise combine.
inline float dot(const float* a, const float* b, std::int64_t n) {
  float acc[kLanes] = {};
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) acc[l] += a[i + l] * b[i + l];
  for (int l = 0; i < n; ++i, ++l) acc[l] += a[i] * b[i];
  return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

// An activation tensor (x or dy, [n][ch][ht][wd] in the problem's layout) widened to a
// channel-contiguous [n][ht][wd][ch] fp32 panel.
std::vector<float> widen_activation(const ops::Conv2dProblem& p, const void* base, std::int64_t ch, std::int64_t ht,
                                    std::int64_t wd, std::int64_t& subnormals) {
  const std::int64_t total = p.n * ch * ht * wd;
  std::vector<float> out(static_cast<std::size_t>(total));
  for (std::int64_t n = 0; n < p.n; ++n)
    for (std::int64_t c = 0; c < ch; ++c)
      for (std::int64_t h = 0; h < ht; ++h)
        for (std::int64_t w = 0; w < wd; ++w) {
          const std::int64_t src =
              p.layout == ConvLayout::nchw ? ((n * ch + c) * ht + h) * wd + w : ((n * ht + h) * wd + w) * ch + c;
          out[((n * ht + h) * wd + w) * ch + c] = mode_value(p, load_element(base, p.dtype, src), subnormals);
        }
  return out;
}

// w widened to [K][R][S][C/G] (transpose = false) or, per group, [C][R][S][K/G] (true).
std::vector<float> widen_filter(const ops::Conv2dProblem& p, bool transpose, std::int64_t& subnormals) {
  std::vector<float> out(static_cast<std::size_t>(p.k * p.cg() * p.r * p.s));
  for (std::int64_t k = 0; k < p.k; ++k)
    for (std::int64_t cg = 0; cg < p.cg(); ++cg)
      for (std::int64_t r = 0; r < p.r; ++r)
        for (std::int64_t s = 0; s < p.s; ++s) {
          const float v = mode_value(p, load_element(p.wt, p.dtype, p.w_index(k, cg, r, s)), subnormals);
          const std::int64_t g = k / p.kg(), kk = k % p.kg(), c = g * p.cg() + cg;
          const std::int64_t dst =
              transpose ? ((c * p.r + r) * p.s + s) * p.kg() + kk : ((k * p.r + r) * p.s + s) * p.cg() + cg;
          out[dst] = v;
        }
  return out;
}

void store(const ops::Conv2dProblem& p, void* base, std::int64_t i, DType t, double v, std::int64_t& subnormal_out) {
  ops::Conv2dCounters c;
  gemm_store_rounded(base, i, t, v, p.flush && t == DType::f16, c);
  subnormal_out += c.fp16_subnormal_outputs;
}

void forward(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters) {
  std::int64_t sub_in = 0, sub_out = 0;
  const std::vector<float> x = widen_activation(p, p.x, p.c, p.h, p.w, sub_in);
  const std::vector<float> w = widen_filter(p, false, sub_in);
  const std::int64_t cg = p.cg(), rows = p.n * p.p;
#pragma omp parallel for schedule(static) num_threads(num_threads()) reduction(+ : sub_out)
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t n = row / p.p, op = row % p.p;
    for (std::int64_t oq = 0; oq < p.q; ++oq)
      for (std::int64_t k = 0; k < p.k; ++k) {
        const std::int64_t c0 = k / p.kg() * cg;
        float acc = 0.0f;
        for (std::int64_t r = 0; r < p.r; ++r) {
          const std::int64_t ih = op * p.stride_h - p.pad_h + r * p.dilation_h;
          if (ih < 0 || ih >= p.h) continue;
          for (std::int64_t s = 0; s < p.s; ++s) {
            const std::int64_t iw = oq * p.stride_w - p.pad_w + s * p.dilation_w;
            if (iw < 0 || iw >= p.w) continue;
            acc += dot(&x[((n * p.h + ih) * p.w + iw) * p.c + c0], &w[((k * p.r + r) * p.s + s) * cg], cg);
          }
        }
        if (p.bias != nullptr) acc += load_element(p.bias, p.bias_dtype, k);
        store(p, p.y, p.y_index(n, k, op, oq), p.dtype, acc, sub_out);
      }
  }
  counters.fp16_subnormal_inputs += sub_in;
  counters.fp16_subnormal_outputs += sub_out;
}

void backward_data(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters) {
  std::int64_t sub_in = 0, sub_out = 0;
  const std::vector<float> dy = widen_activation(p, p.dy, p.k, p.p, p.q, sub_in);
  const std::vector<float> w = widen_filter(p, true, sub_in);
  const std::int64_t kg = p.kg(), rows = p.n * p.h;
#pragma omp parallel for schedule(static) num_threads(num_threads()) reduction(+ : sub_out)
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t n = row / p.h, ih = row % p.h;
    for (std::int64_t iw = 0; iw < p.w; ++iw)
      for (std::int64_t c = 0; c < p.c; ++c) {
        const std::int64_t k0 = c / p.cg() * kg;
        float acc = 0.0f;
        for (std::int64_t r = 0; r < p.r; ++r) {
          const std::int64_t th = ih + p.pad_h - r * p.dilation_h;
          if (th < 0 || th % p.stride_h != 0 || th / p.stride_h >= p.p) continue;
          for (std::int64_t s = 0; s < p.s; ++s) {
            const std::int64_t tw = iw + p.pad_w - s * p.dilation_w;
            if (tw < 0 || tw % p.stride_w != 0 || tw / p.stride_w >= p.q) continue;
            const std::int64_t op = th / p.stride_h, oq = tw / p.stride_w;
            acc += dot(&dy[((n * p.p + op) * p.q + oq) * p.k + k0], &w[((c * p.r + r) * p.s + s) * kg], kg);
          }
        }
        store(p, p.dx, p.x_index(n, c, ih, iw), p.dtype, acc, sub_out);
      }
  }
  counters.fp16_subnormal_inputs += sub_in;
  counters.fp16_subnormal_outputs += sub_out;
}

void backward_weight(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters) {
  std::int64_t sub_in = 0, sub_out = 0;
  const std::int64_t npq = p.n * p.p * p.q;
  if (p.dw != nullptr && npq > 0) {
    // dy as [K][N*P*Q] (each output channel's gradients contiguous), x widened channel-last.
    std::vector<float> dyt(static_cast<std::size_t>(p.k * npq));
    for (std::int64_t n = 0; n < p.n; ++n)
      for (std::int64_t k = 0; k < p.k; ++k)
        for (std::int64_t op = 0; op < p.p; ++op)
          for (std::int64_t oq = 0; oq < p.q; ++oq)
            dyt[k * npq + (n * p.p + op) * p.q + oq] =
                mode_value(p, load_element(p.dy, p.dtype, p.y_index(n, k, op, oq)), sub_in);
    const std::vector<float> x = widen_activation(p, p.x, p.c, p.h, p.w, sub_in);
    const std::int64_t cols = p.c * p.r * p.s;
#pragma omp parallel num_threads(num_threads()) reduction(+ : sub_out)
    {
      std::vector<float> row(static_cast<std::size_t>(npq));  // one im2col row, for one (c, r, s)
#pragma omp for schedule(static)
      for (std::int64_t col = 0; col < cols; ++col) {
        const std::int64_t c = col / (p.r * p.s), r = col / p.s % p.r, s = col % p.s;
        for (std::int64_t n = 0; n < p.n; ++n)
          for (std::int64_t op = 0; op < p.p; ++op) {
            const std::int64_t ih = op * p.stride_h - p.pad_h + r * p.dilation_h;
            for (std::int64_t oq = 0; oq < p.q; ++oq) {
              const std::int64_t iw = oq * p.stride_w - p.pad_w + s * p.dilation_w;
              const bool in = ih >= 0 && ih < p.h && iw >= 0 && iw < p.w;
              row[(n * p.p + op) * p.q + oq] = in ? x[((n * p.h + ih) * p.w + iw) * p.c + c] : 0.0f;
            }
          }
        const std::int64_t g = c / p.cg(), cg = c % p.cg();
        for (std::int64_t kk = 0; kk < p.kg(); ++kk) {
          const std::int64_t k = g * p.kg() + kk;
          double v = dot(&dyt[k * npq], row.data(), npq);
          const std::int64_t i = p.w_index(k, cg, r, s);
          if (p.accumulate) v += static_cast<double>(load_element(p.dw, p.dw_dtype, i));
          store(p, p.dw, i, p.dw_dtype, v, sub_out);
        }
      }
    }
  } else if (p.dw != nullptr) {  // a sum over nothing
    for (std::int64_t i = 0, total = p.k * p.cg() * p.r * p.s; i < total; ++i)
      store(p, p.dw, i, p.dw_dtype, p.accumulate ? load_element(p.dw, p.dw_dtype, i) : 0.0, sub_out);
  }
  if (p.dbias != nullptr) conv2d_bias_gradient(p);
  counters.fp16_subnormal_inputs += sub_in;
  counters.fp16_subnormal_outputs += sub_out;
}

void conv2d_direct(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters) {
  if (p.pass == ops::Conv2dPass::forward)
    forward(p, counters);
  else if (p.pass == ops::Conv2dPass::backward_data)
    backward_data(p, counters);
  else
    backward_weight(p, counters);
}

// kernel name, needs, declines, run
constexpr ops::Conv2dEntry kForward[] = {
    {"conv2d_fwd_direct_f32acc", {}, nullptr, conv2d_direct},
    {"conv2d_fwd_reference", {}, nullptr, conv2d_reference},
};
constexpr ops::Conv2dEntry kBackwardData[] = {
    {"conv2d_bwd_data_direct_f32acc", {}, nullptr, conv2d_direct},
    {"conv2d_bwd_data_reference", {}, nullptr, conv2d_reference},
};
constexpr ops::Conv2dEntry kBackwardWeight[] = {
    {"conv2d_bwd_weight_direct_f32acc", {}, nullptr, conv2d_direct},
    {"conv2d_bwd_weight_reference", {}, nullptr, conv2d_reference},
};

}  // namespace

std::span<const ops::Conv2dEntry> conv2d_forward_kernels() { return kForward; }
std::span<const ops::Conv2dEntry> conv2d_backward_data_kernels() { return kBackwardData; }
std::span<const ops::Conv2dEntry> conv2d_backward_weight_kernels() { return kBackwardWeight; }

}  // namespace ampkit::cpu
