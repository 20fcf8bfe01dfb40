// The optimizer kernels (kernels layer): the fused fp32 AdamW and SGD steps (one pass per
// parameter, every element computed the same way whatever the thread count), the fp64 blocked
// global gradient norm and the exponent-bit finiteness check. OpenMP over fixed blocks of
// elements; the norm's block partials go to a stack array and are added in block order, so no
// result depends on the thread count and no call allocates. Called through the lists of
// optimizer_kernel_list.cpp by src/ops/optimizer/optimizer_front_end.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ampkit/core/threading.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "cpu/optimizer/optimizer_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kBlock = 4096;  // elements per OpenMP iteration (steps)
constexpr std::int64_t kParallelMinElements = 1 << 15;
constexpr std::int64_t kGroup = 2048;  // norm blocks per parallel region (16 KiB of partials)

std::int64_t blocks_of(std::int64_t n, std::int64_t block) { return (n + block - 1) / block; }

template <DType G, DType C, bool kCopy>
void adamw_typed(const ops::AdamWProblem& p) {
  const double beta1 = p.beta1, beta2 = p.beta2;
  const float b1 = p.beta1, b2 = p.beta2;
  const float c1 = static_cast<float>(1.0 - beta1);
  const float c2 = static_cast<float>(1.0 - beta2);
  const ops::AdamWStepScalars bc = ops::adamw_step_scalars(p.lr, p.beta1, p.beta2, p.step);
  const float step_size = bc.step_size, rsqrt_bc2 = bc.rsqrt_bc2;
  const float lr_wd = static_cast<float>(double{p.lr} * double{p.weight_decay});
  const float eps = p.eps, scale = p.grad_scale;
  float* __restrict param = p.param;
  float* __restrict m = p.m;
  float* __restrict v = p.v;
  const std::int64_t blocks = blocks_of(p.n, kBlock);
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (p.n >= kParallelMinElements)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t i1 = std::min(p.n, (b + 1) * kBlock);
    for (std::int64_t i = b * kBlock; i < i1; ++i) {
      const float g = load_as<G>(p.grad, i) * scale;
      const float mi = b1 * m[i] + c1 * g;
      const float vi = b2 * v[i] + c2 * (g * g);
      const float denom = std::sqrt(vi) * rsqrt_bc2 + eps;
      const float old = param[i];
      const float updated = old - (step_size * (mi / denom) + lr_wd * old);
      m[i] = mi;
      v[i] = vi;
      param[i] = updated;
      if constexpr (kCopy) store_as<C>(p.param_copy, i, updated);
    }
  }
}

template <DType G, DType C, bool kCopy>
void sgd_typed(const ops::SgdProblem& p) {
  const float lr = p.lr, mu = p.momentum, wd = p.weight_decay, scale = p.grad_scale;
  float* __restrict param = p.param;
  float* __restrict buf = p.momentum_buffer;
  const std::int64_t blocks = blocks_of(p.n, kBlock);
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (p.n >= kParallelMinElements)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t i1 = std::min(p.n, (b + 1) * kBlock);
    for (std::int64_t i = b * kBlock; i < i1; ++i) {
      const float old = param[i];
      const float g = load_as<G>(p.grad, i) * scale + wd * old;
      float d = g;
      if (mu != 0.0f) {
        d = mu * buf[i] + g;
        buf[i] = d;
      } else if (buf != nullptr) {
        buf[i] = g;
      }
      const float updated = old - lr * d;
      param[i] = updated;
      if constexpr (kCopy) store_as<C>(p.param_copy, i, updated);
    }
  }
}

// Calls f.template operator()<G, C, kCopy>() for the grad and copy dtypes.
template <class F>
void visit_step(DType grad, const void* copy, DType copy_dtype, F&& f) {
  visit_dtype(grad, [&]<DType G>() {
    if (copy == nullptr)
      f.template operator()<G, DType::f32, false>();
    else
      visit_dtype(copy_dtype, [&]<DType C>() { f.template operator()<G, C, true>(); });
  });
}

// Sum of squares of elements [i0, i1) (at most one block) of x: kGradNormLanes interleaved fp64
// lanes, added in lane order.
template <DType X>
double block_sum_of_squares(const void* x, std::int64_t i0, std::int64_t i1) {
  double lanes[kGradNormLanes] = {};
  std::int64_t i = i0;
  for (; i + kGradNormLanes <= i1; i += kGradNormLanes)
    for (int k = 0; k < kGradNormLanes; ++k) {
      const double e = load_as<X>(x, i + k);
      lanes[k] += e * e;  // exact: a float's square fits in a double
    }
  for (int k = 0; i < i1; ++i, ++k) {
    const double e = load_as<X>(x, i);
    lanes[k] += e * e;
  }
  double sum = 0.0;
  for (int k = 0; k < kGradNormLanes; ++k) sum += lanes[k];
  return sum;
}

template <DType X>
void add_sum_of_squares(const void* x, std::int64_t n, double& total) {
  const std::int64_t blocks = blocks_of(n, kGradNormBlock);
  for (std::int64_t g0 = 0; g0 < blocks; g0 += kGroup) {
    const std::int64_t count = std::min(kGroup, blocks - g0);
    double partial[kGroup];
    const bool parallel = count > 1 && n >= kParallelMinElements;
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (parallel)
    for (std::int64_t b = 0; b < count; ++b) {
      const std::int64_t i0 = (g0 + b) * kGradNormBlock;
      partial[b] = block_sum_of_squares<X>(x, i0, std::min(n, i0 + kGradNormBlock));
    }
    for (std::int64_t b = 0; b < count; ++b) total += partial[b];
  }
}

// True when no element of the 16-bit or 32-bit words [i0, i1) has all exponent bits set.
template <DType X>
bool block_finite(const void* x, std::int64_t i0, std::int64_t i1) {
  if constexpr (X == DType::f32) {
    const auto* w = static_cast<const std::uint32_t*>(x);
    std::uint32_t bad = 0;
    for (std::int64_t i = i0; i < i1; ++i) bad |= (w[i] & 0x7f800000u) == 0x7f800000u;
    return bad == 0;
  } else {
    constexpr std::uint16_t mask = X == DType::bf16 ? 0x7f80u : 0x7c00u;
    const auto* w = static_cast<const std::uint16_t*>(x);
    std::uint32_t bad = 0;
    for (std::int64_t i = i0; i < i1; ++i) bad |= (w[i] & mask) == mask;
    return bad == 0;
  }
}

template <DType X>
bool view_finite(const void* x, std::int64_t n) {
  const std::int64_t blocks = blocks_of(n, kBlock);
  int ok = 1;
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) \
    reduction(&& : ok) if (blocks > 1 && n >= kParallelMinElements)
  for (std::int64_t b = 0; b < blocks; ++b) ok = ok && block_finite<X>(x, b * kBlock, std::min(n, (b + 1) * kBlock));
  return ok != 0;
}

}  // namespace

void adamw_cpu(const ops::AdamWProblem& p) {
  visit_step(p.grad_dtype, p.param_copy, p.param_copy_dtype,
             [&]<DType G, DType C, bool kCopy>() { adamw_typed<G, C, kCopy>(p); });
}

void sgd_cpu(const ops::SgdProblem& p) {
  visit_step(p.grad_dtype, p.param_copy, p.param_copy_dtype,
             [&]<DType G, DType C, bool kCopy>() { sgd_typed<G, C, kCopy>(p); });
}

double global_grad_norm_cpu(const ops::ViewsProblem& p) {
  double total = 0.0;
  for (const TensorView& view : p.views) {
    const std::int64_t n = view.numel();
    if (n == 0) continue;
    visit_dtype(view.dtype, [&]<DType X>() { add_sum_of_squares<X>(view.data, n, total); });
  }
  return std::sqrt(total);
}

bool all_finite_cpu(const ops::ViewsProblem& p) {
  for (const TensorView& view : p.views) {
    const std::int64_t n = view.numel();
    if (n == 0) continue;
    if (!visit_dtype(view.dtype, [&]<DType X>() { return view_finite<X>(view.data, n); })) return false;
  }
  return true;
}

}  // namespace ampkit::cpu
