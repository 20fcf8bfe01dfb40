// Front end of add, add_accumulate, add_row_vector, sum_rows and scale (ops layer): validates
// every argument (include/ampkit/ops/elementwise.hpp), turns the call into a kernel problem and
// runs the first entry of the kernel list that takes it. Nothing is written on a rejected call.
#include "ampkit/ops/elementwise.hpp"

#include "ampkit/core/error.hpp"
#include "ops/elementwise/elementwise_kernels.hpp"
#include "ops/elementwise/operand_checks.hpp"

namespace ampkit {
namespace {

cpu::ElementwiseOperand operand(const ops::RowsOperand& r) { return {r.data, r.dtype, r.row_stride}; }

void run(const cpu::ElementwiseProblem& p) {
  if (p.rows == 0 || p.n == 0) return;
  ops::select_kernel(cpu::elementwise_kernels(), p).run(p);
}

// out = a + b for same-shape a, b, out (out may be exactly a or b).
void add_same_shape(const char* fn, const char* a_name, const TensorView& a, const char* b_name, const TensorView& b,
                    const char* out_name, const TensorView& out) {
  ops::check_float_operand(fn, a_name, a);
  ops::check_float_operand(fn, b_name, b);
  ops::check_float_operand(fn, out_name, out);
  ops::check_same_shape(fn, a_name, a, b_name, b);
  ops::check_same_shape(fn, a_name, a, out_name, out);
  const ops::RowsOperand ra = ops::as_rows(fn, a_name, a);
  const ops::RowsOperand rb = ops::as_rows(fn, b_name, b);
  const ops::RowsOperand ro = ops::as_rows(fn, out_name, out);
  ops::check_disjoint_or_same(fn, out_name, ro, a_name, ra);
  ops::check_disjoint_or_same(fn, out_name, ro, b_name, rb);
  cpu::ElementwiseProblem p;
  p.rows = ro.rows;
  p.n = ro.n;
  p.a = operand(ra);
  p.b = operand(rb);
  p.out = ro.data;
  p.out_dtype = ro.dtype;
  p.out_row_stride = ro.row_stride;
  run(p);
}

}  // namespace

void add(const TensorView& a, const TensorView& b, const TensorView& out) {
  add_same_shape("add", "a", a, "b", b, "out", out);
}

void add_accumulate(const TensorView& x, const TensorView& acc) {
  add_same_shape("add_accumulate", "x", x, "acc", acc, "acc", acc);
}

void add_row_vector(const TensorView& x, const TensorView& bias, const TensorView& out) {
  const char* fn = "add_row_vector";
  ops::check_float_operand(fn, "x", x);
  ops::check_float_operand(fn, "bias", bias);
  ops::check_float_operand(fn, "out", out);
  if (x.rank < 1) fail(fn, "x must have rank >= 1 ([rows, n]), but got shape ", x.shape_string());
  ops::check_same_shape(fn, "x", x, "out", out);
  ops::check_rank(fn, "bias", bias, 1);
  if (bias.shape[0] != x.shape[x.rank - 1])
    fail(fn, "bias length must equal x's last dim (", x.shape[x.rank - 1], "), but got ", bias.shape_string());
  const ops::RowsOperand rx = ops::as_rows(fn, "x", x);
  const ops::RowsOperand rb = ops::as_rows(fn, "bias", bias);
  const ops::RowsOperand ro = ops::as_rows(fn, "out", out);
  ops::check_disjoint_or_same(fn, "out", ro, "x", rx);
  ops::check_disjoint(fn, "out", ro, "bias", rb);
  cpu::ElementwiseProblem p;
  p.rows = ro.rows;
  p.n = ro.n;
  p.a = operand(rx);
  p.b = {rb.data, rb.dtype, 0};
  p.out = ro.data;
  p.out_dtype = ro.dtype;
  p.out_row_stride = ro.row_stride;
  run(p);
}

void sum_rows(const TensorView& x, const TensorView& out, bool accumulate) {
  const char* fn = "sum_rows";
  ops::check_float_operand(fn, "x", x);
  ops::check_float_operand(fn, "out", out);
  if (x.rank < 1) fail(fn, "x must have rank >= 1 ([rows, n]), but got shape ", x.shape_string());
  ops::check_rank(fn, "out", out, 1);
  if (out.shape[0] != x.shape[x.rank - 1])
    fail(fn, "out length must equal x's last dim (", x.shape[x.rank - 1], "), but got ", out.shape_string());
  const ops::RowsOperand rx = ops::as_rows(fn, "x", x);
  const ops::RowsOperand ro = ops::as_rows(fn, "out", out);
  ops::check_disjoint(fn, "out", ro, "x", rx);
  if (ro.n == 0) return;
  cpu::SumRowsProblem p;
  p.rows = rx.rows;
  p.n = ro.n;
  p.x = rx.data;
  p.x_dtype = rx.dtype;
  p.x_row_stride = rx.row_stride;
  p.out = ro.data;
  p.out_dtype = ro.dtype;
  p.accumulate = accumulate;
  ops::select_kernel(cpu::sum_rows_kernels(), p).run(p);
}

void scale(const TensorView& x, float alpha, const TensorView& out) {
  const char* fn = "scale";
  ops::check_float_operand(fn, "x", x);
  ops::check_float_operand(fn, "out", out);
  ops::check_finite(fn, "alpha", alpha);
  ops::check_same_shape(fn, "x", x, "out", out);
  const ops::RowsOperand rx = ops::as_rows(fn, "x", x);
  const ops::RowsOperand ro = ops::as_rows(fn, "out", out);
  ops::check_disjoint_or_same(fn, "out", ro, "x", rx);
  cpu::ElementwiseProblem p;
  p.rows = ro.rows;
  p.n = ro.n;
  p.a = operand(rx);
  p.alpha = alpha;
  p.out = ro.data;
  p.out_dtype = ro.dtype;
  p.out_row_stride = ro.row_stride;
  run(p);
}

}  // namespace ampkit
