// Convolution argument validation (ops layer): decodes the TensorView operands of a forward,
// backward-data or backward-weight call into a Conv2dProblem, checking every view (structure,
// rank, shape against the geometry, dtype, null, overlap) and the attributes, with messages in
// the call's own words (function, argument, expected, given). Nothing is allocated on an accepted
// call. Called by conv2d_front_end.cpp.
#include <cstdint>

#include "ampkit/core/error.hpp"
#include "ops/conv2d/conv2d_front_end.hpp"
#include "ops/operand_checks.hpp"

namespace ampkit::ops {
namespace {

void check_params(const char* fn, const Conv2dParams& pr) {
  if (pr.layout != ConvLayout::nchw && pr.layout != ConvLayout::nhwc)
    fail(fn, "params.layout must be nchw or nhwc, but got the value ", static_cast<int>(pr.layout));
  if (pr.stride_h < 1 || pr.stride_w < 1)
    fail(fn, "params.stride_h and params.stride_w must be >= 1, but got ", pr.stride_h, " and ", pr.stride_w);
  if (pr.pad_h < 0 || pr.pad_w < 0)
    fail(fn, "params.pad_h and params.pad_w must be >= 0, but got ", pr.pad_h, " and ", pr.pad_w);
  if (pr.dilation_h < 1 || pr.dilation_w < 1)
    fail(fn, "params.dilation_h and params.dilation_w must be >= 1, but got ", pr.dilation_h, " and ", pr.dilation_w);
  if (pr.groups < 1) fail(fn, "params.groups must be >= 1, but got ", pr.groups);
  if (pr.fp16_mode != Fp16Mode::exact && pr.fp16_mode != Fp16Mode::flush && pr.fp16_mode != Fp16Mode::alt)
    fail(fn, "params.fp16_mode must be exact, flush or alt, but got ", static_cast<int>(pr.fp16_mode));
}

const char* layout_text(ConvLayout l) { return l == ConvLayout::nchw ? "nchw" : "nhwc"; }

void check_rank4(const char* fn, const char* name, const TensorView& v, ConvLayout l, const char* dims_nchw,
                 const char* dims_nhwc) {
  if (v.rank != 4)
    fail(fn, name, " must have rank 4 (", l == ConvLayout::nchw ? dims_nchw : dims_nhwc, ", layout ", layout_text(l),
         "), but got shape ", v.shape_string());
}

// An activation tensor's (n, channels, height, width) in the layout's order.
struct Act {
  std::int64_t n, ch, ht, wd;
};
Act activation_dims(const TensorView& v, ConvLayout l) {
  if (l == ConvLayout::nchw) return {v.shape[0], v.shape[1], v.shape[2], v.shape[3]};
  return {v.shape[0], v.shape[3], v.shape[1], v.shape[2]};
}
void activation_shape(ConvLayout l, const Act& a, std::int64_t* out) {
  if (l == ConvLayout::nchw) {
    out[0] = a.n, out[1] = a.ch, out[2] = a.ht, out[3] = a.wd;
  } else {
    out[0] = a.n, out[1] = a.ht, out[2] = a.wd, out[3] = a.ch;
  }
}
// The filter's (k, c/g, r, s).
struct Filt {
  std::int64_t k, cg, r, s;
};
Filt filter_dims(const TensorView& v, ConvLayout l) {
  if (l == ConvLayout::nchw) return {v.shape[0], v.shape[1], v.shape[2], v.shape[3]};
  return {v.shape[0], v.shape[3], v.shape[1], v.shape[2]};
}
// Fills the problem's geometry from x's and w's dims (named x_name / w_name), checking groups and
// that the filter fits.
void decode_geometry(const char* fn, Conv2dProblem& p, const Conv2dParams& pr, const Act& x, const char* x_name,
                     const TensorView& xv, const Filt& f, const char* w_name, const TensorView& wv) {
  const std::int64_t g = pr.groups;
  if (x.ch < 1) fail(fn, x_name, " must have at least one channel, but got shape ", xv.shape_string());
  if (x.ht < 1 || x.wd < 1) fail(fn, x_name, " must have H, W >= 1, but got shape ", xv.shape_string());
  if (x.ch % g != 0)
    fail(fn, "params.groups (", g, ") must divide the channels of ", x_name, " (", x.ch, "), but got shape ",
         xv.shape_string());
  if (f.k < 1 || f.r < 1 || f.s < 1) fail(fn, w_name, " must have K, R, S >= 1, but got shape ", wv.shape_string());
  if (f.k % g != 0)
    fail(fn, "params.groups (", g, ") must divide the output channels K of ", w_name, " (", f.k, "), but got shape ",
         wv.shape_string());
  if (f.cg != x.ch / g)
    fail(fn, w_name, " must have ", x.ch / g, " input channels per group (C / groups = ", x.ch, " / ", g,
         "), but got shape ", wv.shape_string());
  p.layout = pr.layout;
  p.n = x.n, p.c = x.ch, p.h = x.ht, p.w = x.wd;
  p.k = f.k, p.r = f.r, p.s = f.s;
  p.groups = g;
  p.stride_h = pr.stride_h, p.stride_w = pr.stride_w, p.pad_h = pr.pad_h, p.pad_w = pr.pad_w;
  p.dilation_h = pr.dilation_h, p.dilation_w = pr.dilation_w;
  p.p = conv2d_output_size(p.h, p.r, pr.stride_h, pr.pad_h, pr.dilation_h);
  p.q = conv2d_output_size(p.w, p.s, pr.stride_w, pr.pad_w, pr.dilation_w);
  if (p.p < 1 || p.q < 1)
    fail(fn, "the filter ", w_name, " ", wv.shape_string(), " (dilation ", pr.dilation_h, "x", pr.dilation_w,
         ") must fit in ", x_name, " ", xv.shape_string(), " padded by ", pr.pad_h, "x", pr.pad_w,
         ", but the output would be ", p.p, "x", p.q);
}

void set_mode(Conv2dProblem& p, const Conv2dParams& pr) {
  p.fp16 = p.dtype == DType::f16;
  p.fp16_mode = p.fp16 ? pr.fp16_mode : Fp16Mode::exact;
  p.flush = p.fp16 && pr.fp16_mode == Fp16Mode::flush;
  p.alt = p.fp16 && pr.fp16_mode == Fp16Mode::alt;
}

void check_bias(const char* fn, const char* name, const TensorView& v, std::int64_t k, DType act, const char* what) {
  check_shape(fn, name, v, &k, 1, what);
  check_dtype_or_f32(fn, name, v, act, "the activations' dtype");
}

}  // namespace

Conv2dProblem validate_conv2d(const Conv2dForwardArgs& a, Stage stage) {
  const char* fn = kConv2dForwardFn;
  const Conv2dParams& pr = a.params;
  check_params(fn, pr);
  check_given(fn, "x", a.x, "the input");
  const Device dev = a.x.device;
  const int di = a.x.device_index;
  const auto view = [&](const char* name, const TensorView& v) {
    return check_float_view_on(fn, name, v, dev, di, "x", stage);
  };
  const std::int64_t xb = view("x", a.x);
  check_rank4(fn, "x", a.x, pr.layout, "[N, C, H, W]", "[N, H, W, C]");
  check_given(fn, "w", a.w, "the filter");
  const std::int64_t wb = view("w", a.w);
  check_rank4(fn, "w", a.w, pr.layout, "[K, C/groups, R, S]", "[K, R, S, C/groups]");
  check_dtype_is(fn, "w", a.w, a.x.dtype, "x's dtype");
  Conv2dProblem p;
  p.pass = Conv2dPass::forward;
  p.device = dev, p.device_index = di;
  p.dtype = a.x.dtype;
  decode_geometry(fn, p, pr, activation_dims(a.x, pr.layout), "x", a.x, filter_dims(a.w, pr.layout), "w", a.w);
  set_mode(p, pr);
  check_given(fn, "y", a.y, "the output");
  const std::int64_t yb = view("y", a.y);
  std::int64_t ys[4];
  activation_shape(pr.layout, {p.n, p.k, p.p, p.q}, ys);
  check_shape(fn, "y", a.y, ys, 4, "the output shape of x and w");
  check_dtype_is(fn, "y", a.y, p.dtype, "x's dtype");
  std::int64_t bb = 0;
  if (a.bias.present) {
    bb = view("bias", a.bias);
    check_bias(fn, "bias", a.bias, p.k, p.dtype, "shape (one value per output channel of w)");
  }
  check_data(fn, "x", a.x, "elements", stage);
  check_data(fn, "w", a.w, "elements", stage);
  check_data(fn, "y", a.y, "elements", stage);
  if (a.bias.present) check_data(fn, "bias", a.bias, "elements", stage);
  OverlapCheck overlap(fn, stage);
  overlap.add("x", a.x, xb, false);
  overlap.add("w", a.w, wb, false);
  overlap.add("bias", a.bias, bb, false);
  overlap.add("y", a.y, yb, true);
  overlap.run();
  p.x = a.x.data;
  p.wt = a.w.data;
  p.bias = a.bias.present ? a.bias.data : nullptr;
  p.bias_dtype = a.bias.present ? a.bias.dtype : DType::f32;
  p.y = a.y.data;
  return p;
}

Conv2dProblem validate_conv2d(const Conv2dBackwardDataArgs& a, Stage stage) {
  const char* fn = kConv2dBackwardDataFn;
  const Conv2dParams& pr = a.params;
  check_params(fn, pr);
  check_given(fn, "dy", a.dy, "the gradient of y");
  const Device dev = a.dy.device;
  const int di = a.dy.device_index;
  const auto view = [&](const char* name, const TensorView& v) {
    return check_float_view_on(fn, name, v, dev, di, "dy", stage);
  };
  const std::int64_t dyb = view("dy", a.dy);
  check_rank4(fn, "dy", a.dy, pr.layout, "[N, K, P, Q]", "[N, P, Q, K]");
  check_given(fn, "w", a.w, "the filter");
  const std::int64_t wb = view("w", a.w);
  check_rank4(fn, "w", a.w, pr.layout, "[K, C/groups, R, S]", "[K, R, S, C/groups]");
  check_dtype_is(fn, "w", a.w, a.dy.dtype, "dy's dtype");
  check_given(fn, "dx", a.dx, "the gradient of x, x's shape");
  const std::int64_t dxb = view("dx", a.dx);
  check_rank4(fn, "dx", a.dx, pr.layout, "[N, C, H, W]", "[N, H, W, C]");
  check_dtype_is(fn, "dx", a.dx, a.dy.dtype, "dy's dtype");
  Conv2dProblem p;
  p.pass = Conv2dPass::backward_data;
  p.device = dev, p.device_index = di;
  p.dtype = a.dy.dtype;
  decode_geometry(fn, p, pr, activation_dims(a.dx, pr.layout), "dx", a.dx, filter_dims(a.w, pr.layout), "w", a.w);
  set_mode(p, pr);
  std::int64_t ys[4];
  activation_shape(pr.layout, {p.n, p.k, p.p, p.q}, ys);
  check_shape(fn, "dy", a.dy, ys, 4, "the forward's output shape for dx and w");
  check_data(fn, "dy", a.dy, "elements", stage);
  check_data(fn, "w", a.w, "elements", stage);
  check_data(fn, "dx", a.dx, "elements", stage);
  OverlapCheck overlap(fn, stage);
  overlap.add("dy", a.dy, dyb, false);
  overlap.add("w", a.w, wb, false);
  overlap.add("dx", a.dx, dxb, true);
  overlap.run();
  p.dy = a.dy.data;
  p.wt = a.w.data;
  p.dx = a.dx.data;
  return p;
}

// dw needs x (its shape decides C, H, W) and gives R, S; dbias alone needs dy only.
Conv2dProblem validate_conv2d(const Conv2dBackwardWeightArgs& a, Stage stage) {
  const char* fn = kConv2dBackwardWeightFn;
  const Conv2dParams& pr = a.params;
  check_params(fn, pr);
  check_given(fn, "dy", a.dy, "the gradient of y");
  const Device dev = a.dy.device;
  const int di = a.dy.device_index;
  const auto view = [&](const char* name, const TensorView& v) {
    return check_float_view_on(fn, name, v, dev, di, "dy", stage);
  };
  const std::int64_t dyb = view("dy", a.dy);
  check_rank4(fn, "dy", a.dy, pr.layout, "[N, K, P, Q]", "[N, P, Q, K]");
  Conv2dProblem p;
  p.pass = Conv2dPass::backward_weight;
  p.device = dev, p.device_index = di;
  p.dtype = a.dy.dtype;
  const Act d = activation_dims(a.dy, pr.layout);
  std::int64_t xb = 0, dwb = 0, dbb = 0;
  if (a.dw.present) {
    check_given(fn, "x", a.x, "the forward's input, needed for dw");
    xb = view("x", a.x);
    check_rank4(fn, "x", a.x, pr.layout, "[N, C, H, W]", "[N, H, W, C]");
    check_dtype_is(fn, "x", a.x, p.dtype, "dy's dtype");
    dwb = view("dw", a.dw);
    check_rank4(fn, "dw", a.dw, pr.layout, "[K, C/groups, R, S]", "[K, R, S, C/groups]");
    check_dtype_or_f32(fn, "dw", a.dw, p.dtype, "dy's dtype");
    decode_geometry(fn, p, pr, activation_dims(a.x, pr.layout), "x", a.x, filter_dims(a.dw, pr.layout), "dw", a.dw);
    std::int64_t ys[4];
    activation_shape(pr.layout, {p.n, p.k, p.p, p.q}, ys);
    check_shape(fn, "dy", a.dy, ys, 4, "the forward's output shape for x and dw");
  } else {
    // dbias only (or nothing): the geometry is dy's.
    p.layout = pr.layout;
    p.n = d.n, p.k = d.ch, p.p = d.ht, p.q = d.wd;
    p.groups = pr.groups;
  }
  set_mode(p, pr);
  if (a.dbias.present) {
    dbb = view("dbias", a.dbias);
    check_bias(fn, "dbias", a.dbias, d.ch, p.dtype, "shape (one value per output channel of dy)");
  }
  check_data(fn, "dy", a.dy, "elements", stage);
  if (a.dw.present) {
    check_data(fn, "x", a.x, "elements", stage);
    check_data(fn, "dw", a.dw, "elements", stage);
  }
  if (a.dbias.present) check_data(fn, "dbias", a.dbias, "elements", stage);
  OverlapCheck overlap(fn, stage);
  overlap.add("dy", a.dy, dyb, false);
  if (a.dw.present) overlap.add("x", a.x, xb, false);
  overlap.add("dw", a.dw, dwb, true);
  overlap.add("dbias", a.dbias, dbb, true);
  overlap.run();
  p.dy = a.dy.data;
  p.x = a.dw.present ? a.x.data : nullptr;
  p.dw = a.dw.present ? a.dw.data : nullptr;
  p.dw_dtype = a.dw.present ? a.dw.dtype : p.dtype;
  p.dbias = a.dbias.present ? a.dbias.data : nullptr;
  p.dbias_dtype = a.dbias.present ? a.dbias.dtype : DType::f32;
  p.accumulate = a.accumulate;
  return p;
}

}  // namespace ampkit::ops
