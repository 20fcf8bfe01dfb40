// Front end of add, add_accumulate, add_row_vector, sum_rows and scale (ops layer): validates
// every argument (include/ampkit/ops/elementwise.hpp) while decoding the call into a kernel
// problem, and runs the first entry of the kernel list that takes it; the *_check and
// *_kernel_name queries decode the same way. Nothing is written on a rejected call.
#include "ampkit/ops/elementwise.hpp"

#include "ampkit/core/error.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/elementwise/elementwise_kernels.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/operand_checks.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit {
namespace {

ops::ElementwiseOperand operand(const ops::RowsOperand& r) { return {r.data, r.dtype, r.row_stride}; }

// The list for the call's device: the CPU one, or the CUDA one (docs/CUDA.md).
std::span<const ops::ElementwiseEntry> kernels(const ops::ElementwiseProblem& p) {
  return ops::backend(p.device).kernels().elementwise;
}

// Every elementwise call is one prepared call run once (the graph's Add keeps its own).
void run(const ops::ElementwiseProblem& p) {
  ops::PreparedElementwise call("elementwise", kernels(p), p);
  ops::run_prepared(call);
}

// out = a + b for same-shape a, b, out (out may be exactly a or b).
ops::ElementwiseProblem add_problem(const char* fn, const char* a_name, const TensorView& a, const char* b_name,
                                    const TensorView& b, const char* out_name, const TensorView& out,
                                    ops::Stage stage = ops::Stage::call) {
  const ops::OnDevice dev = ops::call_device(fn, a_name, a);
  ops::check_float_operand_on(fn, a_name, a, dev);
  ops::check_float_operand_on(fn, b_name, b, dev);
  ops::check_float_operand_on(fn, out_name, out, dev);
  ops::check_same_shape(fn, a_name, a, b_name, b);
  ops::check_same_shape(fn, a_name, a, out_name, out);
  const ops::RowsOperand ra = ops::as_rows_on(fn, a_name, a, dev, stage);
  const ops::RowsOperand rb = ops::as_rows_on(fn, b_name, b, dev, stage);
  const ops::RowsOperand ro = ops::as_rows_on(fn, out_name, out, dev, stage);
  ops::check_disjoint_or_same(fn, out_name, ro, a_name, ra, stage);
  ops::check_disjoint_or_same(fn, out_name, ro, b_name, rb, stage);
  ops::ElementwiseProblem p;
  p.device = dev.device;
  p.device_index = dev.index;
  p.rows = ro.rows;
  p.n = ro.n;
  p.a = operand(ra);
  p.b = operand(rb);
  p.out = ro.data;
  p.out_dtype = ro.dtype;
  p.out_row_stride = ro.row_stride;
  return p;
}

ops::ElementwiseProblem add_row_vector_problem(const TensorView& x, const TensorView& bias, const TensorView& out,
                                               ops::Stage stage = ops::Stage::call) {
  const char* fn = "add_row_vector";
  const ops::OnDevice dev = ops::call_device(fn, "x", x);
  ops::check_float_operand_on(fn, "x", x, dev);
  ops::check_float_operand_on(fn, "bias", bias, dev);
  ops::check_float_operand_on(fn, "out", out, dev);
  if (x.rank < 1) fail(fn, "x must have rank >= 1 ([rows, n]), but got shape ", x.shape_string());
  ops::check_same_shape(fn, "x", x, "out", out);
  ops::check_rank(fn, "bias", bias, 1);
  if (bias.shape[0] != x.shape[x.rank - 1])
    fail(fn, "bias length must equal x's last dim (", x.shape[x.rank - 1], "), but got ", bias.shape_string());
  const ops::RowsOperand rx = ops::as_rows_on(fn, "x", x, dev, stage);
  const ops::RowsOperand rb = ops::as_rows_on(fn, "bias", bias, dev, stage);
  const ops::RowsOperand ro = ops::as_rows_on(fn, "out", out, dev, stage);
  ops::check_disjoint_or_same(fn, "out", ro, "x", rx, stage);
  ops::check_disjoint(fn, "out", ro, "bias", rb, stage);
  ops::ElementwiseProblem p;
  p.device = dev.device;
  p.device_index = dev.index;
  p.rows = ro.rows;
  p.n = ro.n;
  p.a = operand(rx);
  p.b = {rb.data, rb.dtype, 0};
  p.out = ro.data;
  p.out_dtype = ro.dtype;
  p.out_row_stride = ro.row_stride;
  return p;
}

ops::SumRowsProblem sum_rows_problem(const TensorView& x, const TensorView& out, bool accumulate,
                                     ops::Stage stage = ops::Stage::call) {
  const char* fn = "sum_rows";
  ops::check_float_operand(fn, "x", x);
  ops::check_float_operand(fn, "out", out);
  if (x.rank < 1) fail(fn, "x must have rank >= 1 ([rows, n]), but got shape ", x.shape_string());
  ops::check_rank(fn, "out", out, 1);
  if (out.shape[0] != x.shape[x.rank - 1])
    fail(fn, "out length must equal x's last dim (", x.shape[x.rank - 1], "), but got ", out.shape_string());
  const ops::RowsOperand rx = ops::as_rows(fn, "x", x, stage);
  const ops::RowsOperand ro = ops::as_rows(fn, "out", out, stage);
  ops::check_disjoint(fn, "out", ro, "x", rx, stage);
  ops::SumRowsProblem p;
  p.rows = rx.rows;
  p.n = ro.n;
  p.x = rx.data;
  p.x_dtype = rx.dtype;
  p.x_row_stride = rx.row_stride;
  p.out = ro.data;
  p.out_dtype = ro.dtype;
  p.accumulate = accumulate;
  return p;
}

ops::ElementwiseProblem scale_problem(const TensorView& x, float alpha, const TensorView& out,
                                      ops::Stage stage = ops::Stage::call) {
  const char* fn = "scale";
  const ops::OnDevice dev = ops::call_device(fn, "x", x);
  ops::check_float_operand_on(fn, "x", x, dev);
  ops::check_float_operand_on(fn, "out", out, dev);
  ops::check_finite(fn, "alpha", alpha);
  ops::check_same_shape(fn, "x", x, "out", out);
  const ops::RowsOperand rx = ops::as_rows_on(fn, "x", x, dev, stage);
  const ops::RowsOperand ro = ops::as_rows_on(fn, "out", out, dev, stage);
  ops::check_disjoint_or_same(fn, "out", ro, "x", rx, stage);
  ops::ElementwiseProblem p;
  p.device = dev.device;
  p.device_index = dev.index;
  p.rows = ro.rows;
  p.n = ro.n;
  p.a = operand(rx);
  p.alpha = alpha;
  p.out = ro.data;
  p.out_dtype = ro.dtype;
  p.out_row_stride = ro.row_stride;
  return p;
}

const char* kernel_name(const ops::ElementwiseProblem& p) { return ops::select_kernel(kernels(p), p).name; }

}  // namespace

namespace ops {

PreparedElementwise prepare_add(const TensorView& a, const TensorView& b, const TensorView& out) {
  const ElementwiseProblem p = add_problem("add", "a", a, "b", b, "out", out);
  return PreparedElementwise("add", kernels(p), p);
}

void run_prepared(PreparedElementwise& call) {
  if (call.problem().rows == 0 || call.problem().n == 0) return;
  call.entry().run(call.problem());
}

}  // namespace ops

void add(const TensorView& a, const TensorView& b, const TensorView& out) {
  ops::PreparedElementwise call = ops::prepare_add(a, b, out);
  ops::run_prepared(call);
}

void add_accumulate(const TensorView& x, const TensorView& acc) {
  run(add_problem("add_accumulate", "x", x, "acc", acc, "acc", acc));
}

void add_row_vector(const TensorView& x, const TensorView& bias, const TensorView& out) {
  run(add_row_vector_problem(x, bias, out));
}

void sum_rows(const TensorView& x, const TensorView& out, bool accumulate) {
  const ops::SumRowsProblem p = sum_rows_problem(x, out, accumulate);
  if (p.n == 0) return;
  ops::select_kernel(ops::backend(Device::cpu).kernels().sum_rows, p).run(p);
}

void scale(const TensorView& x, float alpha, const TensorView& out) { run(scale_problem(x, alpha, out)); }

std::string add_check(const TensorView& a, const TensorView& b, const TensorView& out) noexcept {
  return ops::check_message("add", [&] { add_problem("add", "a", a, "b", b, "out", out); });
}

std::string add_descriptor_check(const TensorView& a, const TensorView& b, const TensorView& out) noexcept {
  return ops::check_message("add", [&] { add_problem("add", "a", a, "b", b, "out", out, ops::Stage::descriptor); });
}

std::string add_accumulate_check(const TensorView& x, const TensorView& acc) noexcept {
  return ops::check_message("add_accumulate", [&] { add_problem("add_accumulate", "x", x, "acc", acc, "acc", acc); });
}

std::string add_accumulate_descriptor_check(const TensorView& x, const TensorView& acc) noexcept {
  return ops::check_message(
      "add_accumulate", [&] { add_problem("add_accumulate", "x", x, "acc", acc, "acc", acc, ops::Stage::descriptor); });
}

std::string add_row_vector_check(const TensorView& x, const TensorView& bias, const TensorView& out) noexcept {
  return ops::check_message("add_row_vector", [&] { add_row_vector_problem(x, bias, out); });
}

std::string add_row_vector_descriptor_check(const TensorView& x, const TensorView& bias,
                                            const TensorView& out) noexcept {
  return ops::check_message("add_row_vector", [&] { add_row_vector_problem(x, bias, out, ops::Stage::descriptor); });
}

std::string sum_rows_check(const TensorView& x, const TensorView& out, bool accumulate) noexcept {
  return ops::check_message("sum_rows", [&] { sum_rows_problem(x, out, accumulate); });
}

std::string sum_rows_descriptor_check(const TensorView& x, const TensorView& out, bool accumulate) noexcept {
  return ops::check_message("sum_rows", [&] { sum_rows_problem(x, out, accumulate, ops::Stage::descriptor); });
}

std::string scale_check(const TensorView& x, float alpha, const TensorView& out) noexcept {
  return ops::check_message("scale", [&] { scale_problem(x, alpha, out); });
}

std::string scale_descriptor_check(const TensorView& x, float alpha, const TensorView& out) noexcept {
  return ops::check_message("scale", [&] { scale_problem(x, alpha, out, ops::Stage::descriptor); });
}

const char* add_kernel_name(const TensorView& a, const TensorView& b, const TensorView& out) {
  return kernel_name(add_problem("add", "a", a, "b", b, "out", out));
}

const char* add_accumulate_kernel_name(const TensorView& x, const TensorView& acc) {
  return kernel_name(add_problem("add_accumulate", "x", x, "acc", acc, "acc", acc));
}

const char* add_row_vector_kernel_name(const TensorView& x, const TensorView& bias, const TensorView& out) {
  return kernel_name(add_row_vector_problem(x, bias, out));
}

const char* sum_rows_kernel_name(const TensorView& x, const TensorView& out, bool accumulate) {
  return ops::select_kernel(ops::backend(Device::cpu).kernels().sum_rows, sum_rows_problem(x, out, accumulate)).name;
}

const char* scale_kernel_name(const TensorView& x, float alpha, const TensorView& out) {
  return kernel_name(scale_problem(x, alpha, out));
}

}  // namespace ampkit
