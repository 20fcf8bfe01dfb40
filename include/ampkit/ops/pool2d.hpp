// 2-D max and average pooling, forward and backward, over NCHW tensors (ops layer, public). The
// pooling of the CNN of `ampkit train --model cnn` (docs/TRAIN.md); the graph's pooling nodes
// call it. CPU kernels only for now (a CUDA operand is refused as unsupported).
#pragma once

#include <cstdint>
#include <string>

#include "ampkit/core/tensor.hpp"

namespace ampkit {

enum class PoolKind : std::uint8_t { max, average };

/// The window: kernel_h x kernel_w, moved by stride_h / stride_w, over the input padded by
/// pad_h / pad_w on each side. Padding is never a value: a max ignores it, an average divides by
/// the window's in-bounds elements (PyTorch's count_include_pad=False). Each of kernel and stride
/// >= 1, 0 <= pad <= kernel / 2 (so every window holds an input element).
struct Pool2dParams {
  PoolKind kind = PoolKind::max;
  int kernel_h = 2, kernel_w = 2;
  int stride_h = 2, stride_w = 2;
  int pad_h = 0, pad_w = 0;
};

/// The output size of one spatial dimension: (in + 2 pad - kernel) / stride + 1 (floor), or 0
/// when the padded input is shorter than the kernel.
std::int64_t pool2d_output_size(std::int64_t in, int kernel, int stride, int pad);

/// y = pool(x).
///   x: [N, C, H, W], y: [N, C, OH, OW] (OH, OW: pool2d_output_size), both contiguous, dtypes
///   each in {f32, bf16, f16}; fp32 math, one rounding per output. Max: the largest element of
///   the window (a NaN wins: the first NaN); average: the mean of its in-bounds elements.
/// Throws ampkit::Error (nothing written) on a bad shape, dtype, device, parameter or overlap.
void pool2d_forward(const TensorView& x, const TensorView& y, const Pool2dParams& params);

/// dx = the gradient of pool2d_forward at x given dy.
///   x, dx: [N, C, H, W]; dy: [N, C, OH, OW]; contiguous, dtypes each in {f32, bf16, f16}.
///   Max: each window's dy goes to its first largest element (row-major order within the
///   window; the forward's choice); average: dy / count to each in-bounds element. An element
///   in several windows receives their sum, in fp32, rounded once. dx is overwritten and must
///   not overlap x or dy.
/// Throws ampkit::Error (nothing written) as pool2d_forward does.
void pool2d_backward(const TensorView& x, const TensorView& dy, const TensorView& dx, const Pool2dParams& params);

/// Empty when the call would run; otherwise the message it would throw. Never throw.
std::string pool2d_forward_check(const TensorView& x, const TensorView& y, const Pool2dParams& params) noexcept;
std::string pool2d_backward_check(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                  const Pool2dParams& params) noexcept;
/// The memory-free stage of the checks above (data ignored, may be null): what the graph
/// verifier asks of a node. "" or the message the call would throw. Never throw.
std::string pool2d_forward_descriptor_check(const TensorView& x, const TensorView& y,
                                            const Pool2dParams& params) noexcept;
std::string pool2d_backward_descriptor_check(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                             const Pool2dParams& params) noexcept;

/// The kernel the call would use now, e.g. "pool2d_cpu". Throw like the call.
const char* pool2d_forward_kernel_name(const TensorView& x, const TensorView& y, const Pool2dParams& params);
const char* pool2d_backward_kernel_name(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                        const Pool2dParams& params);

}  // namespace ampkit
