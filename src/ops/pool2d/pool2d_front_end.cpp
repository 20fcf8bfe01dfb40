// Front end of pool2d_forward and pool2d_backward (ops layer): validates every argument
// (include/ampkit/ops/pool2d.hpp) while decoding the call into a Pool2dProblem (a prepared call,
// ops::PreparedPool2d, which a graph node keeps), and runs the first entry of the CPU list that
// takes it; the *_check and *_kernel_name queries decode the same way. Nothing is written on a
// rejected call.
#include <algorithm>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/pool2d.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/operand_checks.hpp"
#include "ops/pool2d/pool2d_kernels.hpp"

namespace ampkit {
namespace {

std::span<const ops::Pool2dEntry> kernels() { return ops::backend(Device::cpu).kernels().pool2d; }

void check_params(const char* fn, const Pool2dParams& q) {
  if (q.kind != PoolKind::max && q.kind != PoolKind::average)
    fail(fn, "params.kind must be PoolKind::max or PoolKind::average, but got the value ", static_cast<int>(q.kind));
  auto positive = [&](const char* name, int v) {
    if (v < 1) fail(fn, "params.", name, " must be at least 1, but got ", v);
  };
  positive("kernel_h", q.kernel_h);
  positive("kernel_w", q.kernel_w);
  positive("stride_h", q.stride_h);
  positive("stride_w", q.stride_w);
  auto pad = [&](const char* name, int v, const char* kernel_name, int kernel) {
    if (v < 0 || v > kernel / 2)
      fail(fn, "params.", name, " must be in [0, ", kernel_name, " / 2 = ", kernel / 2, "], but got ", v);
  };
  pad("pad_h", q.pad_h, "kernel_h", q.kernel_h);
  pad("pad_w", q.pad_w, "kernel_w", q.kernel_w);
}

// A present, contiguous, rank-4 float operand in CPU memory; (stage 2) data where it has elements.
void check_nchw(const char* fn, const char* name, const TensorView& v, ops::Stage stage) {
  ops::check_float_operand(fn, name, v);
  if (v.rank != 4) fail(fn, name, " must have rank 4 ([N, C, H, W]), but got ", v.describe());
  if (!v.is_contiguous()) fail(fn, name, " must be contiguous (NCHW row-major), but got strides that are not");
  ops::check_data(fn, name, v, "NCHW elements", stage);
}

// Decodes x [N, C, H, W] against the pooled [N, C, OH, OW] `pooled` (y or dy).
ops::Pool2dProblem decode(const char* fn, const TensorView& x, const char* pooled_name, const TensorView& pooled,
                          const Pool2dParams& q, ops::Stage stage) {
  check_nchw(fn, "x", x, stage);
  check_nchw(fn, pooled_name, pooled, stage);
  check_params(fn, q);
  ops::Pool2dProblem p;
  p.params = q;
  p.n = x.shape[0];
  p.c = x.shape[1];
  p.h = x.shape[2];
  p.w = x.shape[3];
  p.oh = pool2d_output_size(p.h, q.kernel_h, q.stride_h, q.pad_h);
  p.ow = pool2d_output_size(p.w, q.kernel_w, q.stride_w, q.pad_w);
  const std::int64_t want[4] = {p.n, p.c, p.oh, p.ow};
  ops::check_shape(fn, pooled_name, pooled, want, 4, "[N, C, OH, OW] of x's N, C and the window's output size");
  p.x = x.data;
  p.x_dtype = x.dtype;
  return p;
}

ops::RowsOperand rows(const char* fn, const char* name, const TensorView& v, ops::Stage stage) {
  return ops::as_rows(fn, name, v, stage);
}

ops::Pool2dProblem forward_problem(const TensorView& x, const TensorView& y, const Pool2dParams& q,
                                   ops::Stage stage = ops::Stage::call) {
  const char* fn = "pool2d_forward";
  ops::Pool2dProblem p = decode(fn, x, "y", y, q, stage);
  ops::check_disjoint(fn, "y", rows(fn, "y", y, stage), "x", rows(fn, "x", x, stage), stage);
  p.out = y.data;
  p.out_dtype = y.dtype;
  return p;
}

ops::Pool2dProblem backward_problem(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                    const Pool2dParams& q, ops::Stage stage = ops::Stage::call) {
  const char* fn = "pool2d_backward";
  ops::Pool2dProblem p = decode(fn, x, "dy", dy, q, stage);
  check_nchw(fn, "dx", dx, stage);
  ops::check_same_shape(fn, "x", x, "dx", dx);
  const ops::RowsOperand rdx = rows(fn, "dx", dx, stage);
  ops::check_disjoint(fn, "dx", rdx, "x", rows(fn, "x", x, stage), stage);
  ops::check_disjoint(fn, "dx", rdx, "dy", rows(fn, "dy", dy, stage), stage);
  p.backward = true;
  p.dy = dy.data;
  p.dy_dtype = dy.dtype;
  p.out = dx.data;
  p.out_dtype = dx.dtype;
  return p;
}

}  // namespace

std::int64_t pool2d_output_size(std::int64_t in, int kernel, int stride, int pad) {
  const std::int64_t padded = in + 2 * static_cast<std::int64_t>(pad);
  if (stride < 1 || kernel < 1 || padded < kernel) return 0;
  return (padded - kernel) / stride + 1;
}

namespace ops {

PreparedPool2d prepare_pool2d_forward(const TensorView& x, const TensorView& y, const Pool2dParams& params) {
  return PreparedPool2d("pool2d_forward", kernels(), forward_problem(x, y, params));
}

PreparedPool2d prepare_pool2d_backward(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                       const Pool2dParams& params) {
  return PreparedPool2d("pool2d_backward", kernels(), backward_problem(x, dy, dx, params));
}

void run_prepared(PreparedPool2d& call) {
  const Pool2dProblem& p = call.problem();
  if (p.n == 0 || p.c == 0 || p.h == 0 || p.w == 0) return;  // nothing to write
  if (p.oh == 0 || p.ow == 0) {
    // No window fits: y is empty; every dx element is in no window, so its gradient is 0.
    if (p.backward) std::fill_n(static_cast<char*>(p.out), p.n * p.c * p.h * p.w * dtype_size(p.out_dtype), 0);
    return;
  }
  call.entry().run(p);
}

}  // namespace ops

void pool2d_forward(const TensorView& x, const TensorView& y, const Pool2dParams& params) {
  ops::PreparedPool2d call = ops::prepare_pool2d_forward(x, y, params);
  ops::run_prepared(call);
}

void pool2d_backward(const TensorView& x, const TensorView& dy, const TensorView& dx, const Pool2dParams& params) {
  ops::PreparedPool2d call = ops::prepare_pool2d_backward(x, dy, dx, params);
  ops::run_prepared(call);
}

std::string pool2d_forward_check(const TensorView& x, const TensorView& y, const Pool2dParams& params) noexcept {
  return ops::check_message("pool2d_forward", [&] { forward_problem(x, y, params); });
}

std::string pool2d_backward_check(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                  const Pool2dParams& params) noexcept {
  return ops::check_message("pool2d_backward", [&] { backward_problem(x, dy, dx, params); });
}

std::string pool2d_forward_descriptor_check(const TensorView& x, const TensorView& y,
                                            const Pool2dParams& params) noexcept {
  return ops::check_message("pool2d_forward", [&] { forward_problem(x, y, params, ops::Stage::descriptor); });
}

std::string pool2d_backward_descriptor_check(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                             const Pool2dParams& params) noexcept {
  return ops::check_message("pool2d_backward", [&] { backward_problem(x, dy, dx, params, ops::Stage::descriptor); });
}

const char* pool2d_forward_kernel_name(const TensorView& x, const TensorView& y, const Pool2dParams& params) {
  return ops::select_kernel(kernels(), forward_problem(x, y, params)).name;
}

const char* pool2d_backward_kernel_name(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                        const Pool2dParams& params) {
  return ops::select_kernel(kernels(), backward_problem(x, dy, dx, params)).name;
}

}  // namespace ampkit
