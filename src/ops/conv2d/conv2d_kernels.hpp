// The convolution problem (ops layer, internal): the validated problem the front end hands to a
// kernel, its index arithmetic for both layouts, and the entry type of the three kernel lists
// (forward, backward-data, backward-weight; the CPU's in src/cpu/conv2d/conv2d_kernels.hpp).
// Read by src/ops/conv2d (validation, dispatch, kernel_name, kernel_statuses), the backends and
// the tests.
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/conv2d.hpp"
#include "ops/gemm/gemm_kernels.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

enum class Conv2dPass : std::uint8_t { forward, backward_data, backward_weight };

/// A call after validation. Geometry: x [n, c, h, w], w [k, c/groups, r, s], y [n, k, p, q] in
/// the layout's order; every extent >= 1 except n (>= 0). Pointers of the pass's operands set,
/// the others null; an absent optional output is null.
struct Conv2dProblem {
  Device device = Device::cpu;
  int device_index = 0;
  Conv2dPass pass = Conv2dPass::forward;
  ConvLayout layout = ConvLayout::nchw;
  std::int64_t n = 0, c = 0, h = 0, w = 0;  // input
  std::int64_t k = 0, r = 0, s = 0;         // filter (k output channels)
  std::int64_t p = 0, q = 0;                // output spatial size
  std::int64_t groups = 1;
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  DType dtype = DType::f32;  // x, w, y, dy, dx
  bool fp16 = false;         // dtype is f16
  bool flush = false;        // fp16 and Fp16Mode::flush
  bool alt = false;          // fp16 and Fp16Mode::alt
  Fp16Mode fp16_mode = Fp16Mode::exact;
  const void* x = nullptr;     // forward, backward_weight (when dw is computed)
  const void* wt = nullptr;    // forward, backward_data
  const void* dy = nullptr;    // backward_data, backward_weight
  const void* bias = nullptr;  // forward, [k], bias_dtype; null: no bias
  DType bias_dtype = DType::f32;
  void* y = nullptr;   // forward
  void* dx = nullptr;  // backward_data
  void* dw = nullptr;  // backward_weight, [k, c/groups, r, s] in dw_dtype; null: not computed
  DType dw_dtype = DType::f32;
  void* dbias = nullptr;  // backward_weight, [k] in dbias_dtype; null: not computed
  DType dbias_dtype = DType::f32;
  bool accumulate = false;  // dw/dbias += instead of =

  std::int64_t cg() const { return c / groups; }  // input channels per group
  std::int64_t kg() const { return k / groups; }  // output channels per group
  /// Element offsets in the layout's order.
  std::int64_t x_index(std::int64_t in, std::int64_t ic, std::int64_t ih, std::int64_t iw) const {
    return layout == ConvLayout::nchw ? ((in * c + ic) * h + ih) * w + iw : ((in * h + ih) * w + iw) * c + ic;
  }
  std::int64_t y_index(std::int64_t in, std::int64_t ik, std::int64_t ip, std::int64_t iq) const {
    return layout == ConvLayout::nchw ? ((in * k + ik) * p + ip) * q + iq : ((in * p + ip) * q + iq) * k + ik;
  }
  /// Filter element (ik, channel icg within the group, ir, is).
  std::int64_t w_index(std::int64_t ik, std::int64_t icg, std::int64_t ir, std::int64_t is) const {
    return layout == ConvLayout::nchw ? ((ik * cg() + icg) * r + ir) * s + is : ((ik * r + ir) * s + is) * cg() + icg;
  }
  /// Length of one output element's reduction: C/G * R * S (forward), K/G * R * S / stride
  /// (backward-data, at most K/G * R * S), N * P * Q (backward-weight).
  std::int64_t reduction_length() const {
    if (pass == Conv2dPass::forward) return cg() * r * s;
    if (pass == Conv2dPass::backward_data) return kg() * r * s;
    return n * p * q;
  }
};

/// The fp16 counters of one call (the GEMM's).
using Conv2dCounters = GemmCounters;

using Conv2dFn = void (*)(const Conv2dProblem& problem, Conv2dCounters& counters);

/// An entry of the three lists. The reference (last) takes every problem.
using Conv2dEntry = KernelEntry<Conv2dProblem, Conv2dFn>;

}  // namespace ampkit::ops
