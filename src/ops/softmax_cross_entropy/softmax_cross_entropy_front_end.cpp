// Front end of softmax_cross_entropy_forward/backward (ops layer): validates every argument
// (include/ampkit/ops/softmax_cross_entropy.hpp) including every target against the class count,
// builds a SoftmaxCrossEntropyProblem and runs the first entry of the direction's kernel list
// that takes it; the *_check and *_kernel_name queries decode the same way. Nothing is written on
// a rejected call.
#include "ampkit/ops/softmax_cross_entropy.hpp"

#include <cstdint>

#include "ampkit/core/error.hpp"
#include "ops/check_message.hpp"
#include "ops/operand_checks.hpp"
#include "ops/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit {
namespace {

struct Checked {
  cpu::SoftmaxCrossEntropyProblem problem;
  ops::RowsOperand logits, targets, lse;
};

// logits [rows, classes] float, targets [rows] i32 in range, lse [rows] f32.
Checked check_common(const char* fn, const TensorView& logits, const TensorView& targets, const TensorView& lse) {
  ops::check_float_operand(fn, "logits", logits);
  ops::check_dtype(fn, "targets", targets, DType::i32);
  ops::check_dtype(fn, "lse", lse, DType::f32);
  ops::check_rank(fn, "logits", logits, 2);
  ops::check_rank(fn, "targets", targets, 1);
  ops::check_rank(fn, "lse", lse, 1);
  const std::int64_t rows = logits.shape[0], classes = logits.shape[1];
  if (rows < 1) fail(fn, "logits must have at least one row (the loss is a mean), but got ", logits.shape_string());
  if (classes < 1) fail(fn, "logits must have at least one class, but got ", logits.shape_string());
  if (classes > INT32_MAX) fail(fn, "classes must be at most ", INT32_MAX, ", but got ", classes);
  if (targets.shape[0] != rows)
    fail(fn, "targets length must equal logits' rows (", rows, "), but got ", targets.shape_string());
  if (lse.shape[0] != rows) fail(fn, "lse length must equal logits' rows (", rows, "), but got ", lse.shape_string());
  Checked c;
  c.logits = ops::as_rows(fn, "logits", logits);
  c.targets = ops::as_flat(fn, "targets", targets);
  c.lse = ops::as_flat(fn, "lse", lse);
  const auto* t = static_cast<const std::int32_t*>(c.targets.data);
  for (std::int64_t r = 0; r < rows; ++r)
    if (t[r] < 0 || t[r] >= classes) fail(fn, "targets[", r, "] = ", t[r], " is out of range [0, ", classes, ")");
  auto& p = c.problem;
  p.rows = rows;
  p.classes = classes;
  p.logits = c.logits.data;
  p.logits_dtype = c.logits.dtype;
  p.logits_row_stride = c.logits.row_stride;
  p.targets = t;
  p.lse = static_cast<float*>(c.lse.data);
  return c;
}

cpu::SoftmaxCrossEntropyProblem forward_problem(const TensorView& logits, const TensorView& targets,
                                                const TensorView& loss, const TensorView& lse) {
  const char* fn = "softmax_cross_entropy_forward";
  ops::check_dtype(fn, "loss", loss, DType::f32);
  if (!(loss.rank == 0 || (loss.rank == 1 && loss.shape[0] == 1)))
    fail(fn, "loss must have shape [] or [1], but got ", loss.shape_string());
  Checked c = check_common(fn, logits, targets, lse);
  const ops::RowsOperand rloss = ops::as_flat(fn, "loss", loss);
  ops::check_disjoint(fn, "lse", c.lse, "logits", c.logits);
  ops::check_disjoint(fn, "lse", c.lse, "targets", c.targets);
  ops::check_disjoint(fn, "loss", rloss, "logits", c.logits);
  ops::check_disjoint(fn, "loss", rloss, "targets", c.targets);
  ops::check_disjoint(fn, "loss", rloss, "lse", c.lse);
  c.problem.loss = static_cast<float*>(rloss.data);
  return c.problem;
}

cpu::SoftmaxCrossEntropyProblem backward_problem(const TensorView& logits, const TensorView& targets,
                                                 const TensorView& lse, float dloss, const TensorView& dlogits) {
  const char* fn = "softmax_cross_entropy_backward";
  ops::check_float_operand(fn, "dlogits", dlogits);
  ops::check_finite(fn, "dloss", dloss);
  Checked c = check_common(fn, logits, targets, lse);
  ops::check_same_shape(fn, "logits", logits, "dlogits", dlogits);
  const ops::RowsOperand rd = ops::as_rows(fn, "dlogits", dlogits);
  ops::check_disjoint_or_same(fn, "dlogits", rd, "logits", c.logits);
  ops::check_disjoint(fn, "dlogits", rd, "targets", c.targets);
  ops::check_disjoint(fn, "dlogits", rd, "lse", c.lse);
  c.problem.dloss = dloss;
  c.problem.dlogits = rd.data;
  c.problem.dlogits_dtype = rd.dtype;
  c.problem.dlogits_row_stride = rd.row_stride;
  return c.problem;
}

}  // namespace

void softmax_cross_entropy_forward(const TensorView& logits, const TensorView& targets, const TensorView& loss,
                                   const TensorView& lse) {
  const cpu::SoftmaxCrossEntropyProblem p = forward_problem(logits, targets, loss, lse);
  ops::select_kernel(cpu::softmax_cross_entropy_forward_kernels(), p).run(p);
}

void softmax_cross_entropy_backward(const TensorView& logits, const TensorView& targets, const TensorView& lse,
                                    float dloss, const TensorView& dlogits) {
  const cpu::SoftmaxCrossEntropyProblem p = backward_problem(logits, targets, lse, dloss, dlogits);
  ops::select_kernel(cpu::softmax_cross_entropy_backward_kernels(), p).run(p);
}

std::string softmax_cross_entropy_forward_check(const TensorView& logits, const TensorView& targets,
                                                const TensorView& loss, const TensorView& lse) noexcept {
  return ops::check_message("softmax_cross_entropy_forward", [&] { forward_problem(logits, targets, loss, lse); });
}

std::string softmax_cross_entropy_backward_check(const TensorView& logits, const TensorView& targets,
                                                 const TensorView& lse, float dloss,
                                                 const TensorView& dlogits) noexcept {
  return ops::check_message("softmax_cross_entropy_backward",
                            [&] { backward_problem(logits, targets, lse, dloss, dlogits); });
}

const char* softmax_cross_entropy_forward_kernel_name(const TensorView& logits, const TensorView& targets,
                                                      const TensorView& loss, const TensorView& lse) {
  return ops::select_kernel(cpu::softmax_cross_entropy_forward_kernels(), forward_problem(logits, targets, loss, lse))
      .name;
}

const char* softmax_cross_entropy_backward_kernel_name(const TensorView& logits, const TensorView& targets,
                                                       const TensorView& lse, float dloss, const TensorView& dlogits) {
  return ops::select_kernel(cpu::softmax_cross_entropy_backward_kernels(),
                            backward_problem(logits, targets, lse, dloss, dlogits))
      .name;
}

}  // namespace ampkit
