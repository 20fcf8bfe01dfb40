// Front end of gelu_forward and gelu_backward (ops layer): validates every argument
// (include/ampkit/ops/activation.hpp) while decoding the call into a GeluProblem (a prepared call,
// ops::PreparedGelu, which the graph keeps per node), and runs the first entry of the device's
// list that takes it; the *_check and *_kernel_name queries decode the
// same way. Nothing is written on a rejected call.
#include "ampkit/ops/activation.hpp"

#include "ampkit/core/error.hpp"
#include "ops/activation/activation_kernels.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/operand_checks.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit {
namespace {

void check_variant(const char* fn, GeluVariant variant) {
  if (variant != GeluVariant::tanh && variant != GeluVariant::erf)
    fail(fn, "variant must be GeluVariant::tanh or GeluVariant::erf, but got the value ", static_cast<int>(variant));
}

// The list for the call's device: the CPU one, or the CUDA one (docs/CUDA.md).
std::span<const ops::GeluEntry> kernels(const ops::GeluProblem& p) { return ops::backend(p.device).kernels().gelu; }

ops::GeluProblem forward_problem(const TensorView& x, const TensorView& y, GeluVariant variant,
                                 ops::Stage stage = ops::Stage::call) {
  const char* fn = "gelu_forward";
  const ops::OnDevice dev = ops::call_device(fn, "x", x);
  ops::check_float_operand_on(fn, "x", x, dev);
  ops::check_float_operand_on(fn, "y", y, dev);
  check_variant(fn, variant);
  ops::check_same_shape(fn, "x", x, "y", y);
  const ops::RowsOperand rx = ops::as_rows_on(fn, "x", x, dev, stage);
  const ops::RowsOperand ry = ops::as_rows_on(fn, "y", y, dev, stage);
  ops::check_disjoint_or_same(fn, "y", ry, "x", rx, stage);
  ops::GeluProblem p;
  p.device = dev.device;
  p.device_index = dev.index;
  p.rows = ry.rows;
  p.n = ry.n;
  p.variant = variant;
  p.x = rx.data;
  p.x_dtype = rx.dtype;
  p.x_row_stride = rx.row_stride;
  p.out = ry.data;
  p.out_dtype = ry.dtype;
  p.out_row_stride = ry.row_stride;
  return p;
}

ops::GeluProblem backward_problem(const TensorView& x, const TensorView& dy, const TensorView& dx, GeluVariant variant,
                                  ops::Stage stage = ops::Stage::call) {
  const char* fn = "gelu_backward";
  const ops::OnDevice dev = ops::call_device(fn, "x", x);
  ops::check_float_operand_on(fn, "x", x, dev);
  ops::check_float_operand_on(fn, "dy", dy, dev);
  ops::check_float_operand_on(fn, "dx", dx, dev);
  check_variant(fn, variant);
  ops::check_same_shape(fn, "x", x, "dy", dy);
  ops::check_same_shape(fn, "x", x, "dx", dx);
  const ops::RowsOperand rx = ops::as_rows_on(fn, "x", x, dev, stage);
  const ops::RowsOperand rdy = ops::as_rows_on(fn, "dy", dy, dev, stage);
  const ops::RowsOperand rdx = ops::as_rows_on(fn, "dx", dx, dev, stage);
  ops::check_disjoint(fn, "dx", rdx, "x", rx, stage);
  ops::check_disjoint_or_same(fn, "dx", rdx, "dy", rdy, stage);
  ops::GeluProblem p;
  p.device = dev.device;
  p.device_index = dev.index;
  p.rows = rdx.rows;
  p.n = rdx.n;
  p.backward = true;
  p.variant = variant;
  p.x = rx.data;
  p.x_dtype = rx.dtype;
  p.x_row_stride = rx.row_stride;
  p.dy = rdy.data;
  p.dy_dtype = rdy.dtype;
  p.dy_row_stride = rdy.row_stride;
  p.out = rdx.data;
  p.out_dtype = rdx.dtype;
  p.out_row_stride = rdx.row_stride;
  return p;
}

}  // namespace

namespace ops {

PreparedGelu prepare_gelu_forward(const TensorView& x, const TensorView& y, GeluVariant variant) {
  const GeluProblem p = forward_problem(x, y, variant);
  return PreparedGelu("gelu_forward", kernels(p), p);
}

PreparedGelu prepare_gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                   GeluVariant variant) {
  const GeluProblem p = backward_problem(x, dy, dx, variant);
  return PreparedGelu("gelu_backward", kernels(p), p);
}

void run_prepared(PreparedGelu& call) {
  if (call.problem().rows == 0 || call.problem().n == 0) return;
  call.entry().run(call.problem());
}

}  // namespace ops

void gelu_forward(const TensorView& x, const TensorView& y, GeluVariant variant) {
  ops::PreparedGelu call = ops::prepare_gelu_forward(x, y, variant);
  ops::run_prepared(call);
}

void gelu_backward(const TensorView& x, const TensorView& dy, const TensorView& dx, GeluVariant variant) {
  ops::PreparedGelu call = ops::prepare_gelu_backward(x, dy, dx, variant);
  ops::run_prepared(call);
}

std::string gelu_forward_check(const TensorView& x, const TensorView& y, GeluVariant variant) noexcept {
  return ops::check_message("gelu_forward", [&] { forward_problem(x, y, variant); });
}

std::string gelu_backward_check(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                GeluVariant variant) noexcept {
  return ops::check_message("gelu_backward", [&] { backward_problem(x, dy, dx, variant); });
}

std::string gelu_forward_descriptor_check(const TensorView& x, const TensorView& y, GeluVariant variant) noexcept {
  return ops::check_message("gelu_forward", [&] { forward_problem(x, y, variant, ops::Stage::descriptor); });
}

std::string gelu_backward_descriptor_check(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                           GeluVariant variant) noexcept {
  return ops::check_message("gelu_backward", [&] { backward_problem(x, dy, dx, variant, ops::Stage::descriptor); });
}

const char* gelu_forward_kernel_name(const TensorView& x, const TensorView& y, GeluVariant variant) {
  const ops::GeluProblem p = forward_problem(x, y, variant);
  return ops::select_kernel(kernels(p), p).name;
}

const char* gelu_backward_kernel_name(const TensorView& x, const TensorView& dy, const TensorView& dx,
                                      GeluVariant variant) {
  const ops::GeluProblem p = backward_problem(x, dy, dx, variant);
  return ops::select_kernel(kernels(p), p).name;
}

}  // namespace ampkit
