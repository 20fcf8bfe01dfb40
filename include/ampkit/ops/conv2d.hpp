// 2-D convolution, forward, backward-data and backward-weight (+ bias and its gradient) (ops
// layer). Cross-correlation, as every framework computes it:
//   y[n, k, p, q] = bias[k] + sum_{c in group(k), r, s} x[n, c, p*sh - ph + r*dh, q*sw - pw + s*dw] w[k, c, r, s]
// (input positions outside x read as 0). Layouts: NCHW (x [N, C, H, W], w [K, C/G, R, S],
// y [N, K, P, Q]) or NHWC (x [N, H, W, C], w [K, R, S, C/G], y [N, P, Q, K]); any stride, padding,
// dilation and groups (G divides C and K; depthwise is G = C). x, w, y, dy, dx one dtype in
// {f32, bf16, f16}, every product accumulated in fp32 (the reference in double), each output
// rounded once. bias / dbias: f32 or the activation dtype; dw: the activation dtype or f32.
// Fp16 operands follow Conv2dParams::fp16_mode (exact / flush / alt, as the GEMM's modes:
// docs/NUMERICS.md "Convolution"); conv2d_*_with_policy (ampkit/numerics/conv2d_policy.hpp)
// choose it by the convolution's own policy. Results are bitwise independent of the thread count.
// Every operand is a row-major contiguous TensorView in cpu memory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/ops/kernel_info.hpp"

namespace ampkit {

enum class ConvLayout : std::uint8_t { nchw, nhwc };

/// The convolution's attributes, shared by the three calls of one layer.
struct Conv2dParams {
  ConvLayout layout = ConvLayout::nchw;
  int stride_h = 1, stride_w = 1;        // >= 1
  int pad_h = 0, pad_w = 0;              // >= 0 (zero padding, both sides)
  int dilation_h = 1, dilation_w = 1;    // >= 1
  int groups = 1;                        // >= 1, divides C and K
  Fp16Mode fp16_mode = Fp16Mode::exact;  // used when the activations are f16
};

struct Conv2dForwardArgs {
  TensorView x;     // [N, C, H, W] (nchw) or [N, H, W, C] (nhwc)
  TensorView w;     // [K, C/G, R, S] (nchw) or [K, R, S, C/G] (nhwc), x's dtype
  TensorView bias;  // [K], f32 or x's dtype; absent: no bias
  TensorView y;     // [N, K, P, Q] / [N, P, Q, K], x's dtype; P = (H + 2ph - dh(R-1) - 1)/sh + 1
  Conv2dParams params;
};

/// dx = the gradient of x: the transposed convolution of dy with w.
struct Conv2dBackwardDataArgs {
  TensorView dy;  // y's shape
  TensorView w;   // as in the forward, dy's dtype
  TensorView dx;  // x's shape (its H, W decide the geometry), dy's dtype
  Conv2dParams params;
};

/// dw = sum over n, p, q of dy * x; dbias = sum of dy over n, p, q. Either output may be absent.
struct Conv2dBackwardWeightArgs {
  TensorView dy;            // y's shape
  TensorView x;             // as in the forward, dy's dtype
  TensorView dw;            // w's shape, dy's dtype or f32; absent: not computed
  TensorView dbias;         // [K], f32 or dy's dtype; absent: not computed
  bool accumulate = false;  // dw/dbias += instead of =
  Conv2dParams params;
};

/// What one call did (optional out-parameter of every call).
struct Conv2dReport {
  const char* kernel = "";                  // the kernel that ran ("" when nothing ran)
  bool fp16 = false;                        // the activations are f16
  Fp16Mode fp16_mode = Fp16Mode::exact;     // the mode used (meaningful when fp16)
  std::int64_t fp16_subnormal_inputs = 0;   // fp16 subnormal elements of the two operands read
  std::int64_t fp16_subnormal_outputs = 0;  // fp16 outputs that rounded to a subnormal
};

/// y = conv(x, w) + bias. Throws ampkit::Error (outputs untouched) on bad input: invalid_argument
/// naming the function, the argument, what was expected and what was given.
void conv2d_forward(const Conv2dForwardArgs& args, Conv2dReport* report = nullptr);
/// dx of conv2d_forward. Throws ampkit::Error (dx untouched).
void conv2d_backward_data(const Conv2dBackwardDataArgs& args, Conv2dReport* report = nullptr);
/// dw and dbias of conv2d_forward. Throws ampkit::Error (outputs untouched).
void conv2d_backward_weight(const Conv2dBackwardWeightArgs& args, Conv2dReport* report = nullptr);

/// Empty when the call would run; otherwise the message it would throw. Never throws.
std::string conv2d_check(const Conv2dForwardArgs& args) noexcept;
std::string conv2d_check(const Conv2dBackwardDataArgs& args) noexcept;
std::string conv2d_check(const Conv2dBackwardWeightArgs& args) noexcept;
/// The memory-free stage of the check (view data ignored; what a graph verifier asks).
std::string conv2d_descriptor_check(const Conv2dForwardArgs& args) noexcept;
std::string conv2d_descriptor_check(const Conv2dBackwardDataArgs& args) noexcept;
std::string conv2d_descriptor_check(const Conv2dBackwardWeightArgs& args) noexcept;

/// The kernel the call would use now (given AMPKIT_ISA and the machine). Throws like the call.
const char* conv2d_kernel_name(const Conv2dForwardArgs& args);
const char* conv2d_kernel_name(const Conv2dBackwardDataArgs& args);
const char* conv2d_kernel_name(const Conv2dBackwardWeightArgs& args);

/// Every kernel of the op's list, best first, with the reason it declines the call. Throws like
/// the call.
std::vector<KernelStatus> conv2d_kernel_statuses(const Conv2dForwardArgs& args);
std::vector<KernelStatus> conv2d_kernel_statuses(const Conv2dBackwardDataArgs& args);
std::vector<KernelStatus> conv2d_kernel_statuses(const Conv2dBackwardWeightArgs& args);

/// The output spatial size of one dimension: (in + 2 pad - dilation (kernel - 1) - 1) / stride + 1,
/// or a value < 1 when the kernel does not fit.
constexpr std::int64_t conv2d_output_size(std::int64_t in, std::int64_t kernel, int stride, int pad, int dilation) {
  const std::int64_t span = static_cast<std::int64_t>(dilation) * (kernel - 1) + 1;
  const std::int64_t room = in + 2 * static_cast<std::int64_t>(pad) - span;
  return room < 0 ? 0 : room / stride + 1;
}

}  // namespace ampkit
