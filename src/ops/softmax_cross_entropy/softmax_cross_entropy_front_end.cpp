// Front end of softmax_cross_entropy_forward/backward (ops layer): validates every argument
// (include/ampkit/ops/softmax_cross_entropy.hpp) including every target against the class count,
// builds a SoftmaxCrossEntropyProblem and runs the first entry of the direction's kernel list
// that takes it; the *_check and *_kernel_name queries decode the same way. Nothing is written on
// a rejected call.
#include "ampkit/ops/softmax_cross_entropy.hpp"

#include <cstdint>
#include <new>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/operand_checks.hpp"
#include "ops/prepared_ops.hpp"
#include "ops/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit {
namespace {

constexpr const char* kForwardFn = "softmax_cross_entropy_forward";
constexpr const char* kBackwardFn = "softmax_cross_entropy_backward";

struct Checked {
  ops::SoftmaxCrossEntropyProblem problem;
  ops::RowsOperand logits, targets, lse;
};

// logits [rows, classes] float, targets [rows] i32 in range, lse [rows] f32.
// The targets as host memory for the range check: themselves on the cpu; on a GPU a copy (the
// calling thread's stream, waited for), so a bad target is an Error before anything is enqueued.
const std::int32_t* host_targets(const char* fn, const ops::SoftmaxCrossEntropyProblem& p) {
  if (p.device != Device::cuda || p.rows == 0) return p.targets;
  thread_local std::vector<std::int32_t> copy;
  try {
    copy.resize(static_cast<std::size_t>(p.rows));
  } catch (const std::bad_alloc&) {
    fail_with(ErrorKind::out_of_memory, fn, "could not allocate a host copy of ", p.rows, " targets");
  }
  cuda_copy_to_host(copy.data(), p.targets, static_cast<std::size_t>(p.rows) * sizeof(std::int32_t), p.device_index);
  return copy.data();
}

// Every target of a problem in [0, classes); reads the targets only (stage 2, and every run of a
// prepared call: their contents change between runs).
void check_targets_in_range(const char* fn, const ops::SoftmaxCrossEntropyProblem& p) {
  const std::int32_t* host = host_targets(fn, p);
  for (std::int64_t r = 0; r < p.rows; ++r)
    if (host[r] < 0 || host[r] >= p.classes)
      fail(fn, "targets[", r, "] = ", host[r], " is out of range [0, ", p.classes, ")");
}

// check_values: false for a prepared call, whose runs check the targets.
Checked check_common(const char* fn, const TensorView& logits, const TensorView& targets, const TensorView& lse,
                     const ops::OnDevice& dev, ops::Stage stage, bool check_values) {
  ops::check_float_operand_on(fn, "logits", logits, dev);
  ops::check_dtype_on(fn, "targets", targets, DType::i32, dev);
  ops::check_dtype_on(fn, "lse", lse, DType::f32, dev);
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
  c.logits = ops::as_rows_on(fn, "logits", logits, dev, stage);
  c.targets = ops::as_flat_on(fn, "targets", targets, dev, stage);
  c.lse = ops::as_flat_on(fn, "lse", lse, dev, stage);
  const auto* t = static_cast<const std::int32_t*>(c.targets.data);
  auto& p = c.problem;
  p.device = dev.device;
  p.device_index = dev.index;
  p.rows = rows;
  p.classes = classes;
  p.logits = c.logits.data;
  p.logits_dtype = c.logits.dtype;
  p.logits_row_stride = c.logits.row_stride;
  p.targets = t;
  p.lse = static_cast<float*>(c.lse.data);
  if (stage == ops::Stage::call && check_values) check_targets_in_range(fn, p);  // reads the targets: stage 2
  return c;
}

ops::SoftmaxCrossEntropyProblem forward_problem(const TensorView& logits, const TensorView& targets,
                                                const TensorView& loss, const TensorView& lse,
                                                ops::Stage stage = ops::Stage::call, bool check_values = true) {
  const char* fn = "softmax_cross_entropy_forward";
  const ops::OnDevice dev = ops::call_device(fn, "logits", logits);
  ops::check_dtype_on(fn, "loss", loss, DType::f32, dev);
  if (!(loss.rank == 0 || (loss.rank == 1 && loss.shape[0] == 1)))
    fail(fn, "loss must have shape [] or [1], but got ", loss.shape_string());
  Checked c = check_common(fn, logits, targets, lse, dev, stage, check_values);
  const ops::RowsOperand rloss = ops::as_flat_on(fn, "loss", loss, dev, stage);
  ops::check_disjoint(fn, "lse", c.lse, "logits", c.logits, stage);
  ops::check_disjoint(fn, "lse", c.lse, "targets", c.targets, stage);
  ops::check_disjoint(fn, "loss", rloss, "logits", c.logits, stage);
  ops::check_disjoint(fn, "loss", rloss, "targets", c.targets, stage);
  ops::check_disjoint(fn, "loss", rloss, "lse", c.lse, stage);
  c.problem.loss = static_cast<float*>(rloss.data);
  return c.problem;
}

ops::SoftmaxCrossEntropyProblem backward_problem(const TensorView& logits, const TensorView& targets,
                                                 const TensorView& lse, float dloss, const TensorView& dlogits,
                                                 ops::Stage stage = ops::Stage::call, bool check_values = true) {
  const char* fn = "softmax_cross_entropy_backward";
  const ops::OnDevice dev = ops::call_device(fn, "logits", logits);
  ops::check_float_operand_on(fn, "dlogits", dlogits, dev);
  ops::check_finite(fn, "dloss", dloss);
  Checked c = check_common(fn, logits, targets, lse, dev, stage, check_values);
  ops::check_same_shape(fn, "logits", logits, "dlogits", dlogits);
  const ops::RowsOperand rd = ops::as_rows_on(fn, "dlogits", dlogits, dev, stage);
  ops::check_disjoint_or_same(fn, "dlogits", rd, "logits", c.logits, stage);
  ops::check_disjoint(fn, "dlogits", rd, "targets", c.targets, stage);
  ops::check_disjoint(fn, "dlogits", rd, "lse", c.lse, stage);
  c.problem.dloss = dloss;
  c.problem.dlogits = rd.data;
  c.problem.dlogits_dtype = rd.dtype;
  c.problem.dlogits_row_stride = rd.row_stride;
  return c.problem;
}

std::span<const ops::SoftmaxCrossEntropyEntry> forward_kernels(const ops::SoftmaxCrossEntropyProblem& p) {
  return ops::backend(p.device).kernels().softmax_cross_entropy_forward;
}

std::span<const ops::SoftmaxCrossEntropyEntry> backward_kernels(const ops::SoftmaxCrossEntropyProblem& p) {
  return ops::backend(p.device).kernels().softmax_cross_entropy_backward;
}

}  // namespace

namespace ops {

PreparedSoftmaxCrossEntropy prepare_softmax_cross_entropy_forward(const TensorView& logits, const TensorView& targets,
                                                                  const TensorView& loss, const TensorView& lse) {
  const SoftmaxCrossEntropyProblem p = forward_problem(logits, targets, loss, lse, Stage::call, false);
  return {PreparedCall<SoftmaxCrossEntropyProblem, SoftmaxCrossEntropyFn>(kForwardFn, forward_kernels(p), p), false};
}

PreparedSoftmaxCrossEntropy prepare_softmax_cross_entropy_backward(const TensorView& logits, const TensorView& targets,
                                                                   const TensorView& lse, float dloss,
                                                                   const TensorView& dlogits) {
  const SoftmaxCrossEntropyProblem p = backward_problem(logits, targets, lse, dloss, dlogits, Stage::call, false);
  return {PreparedCall<SoftmaxCrossEntropyProblem, SoftmaxCrossEntropyFn>(kBackwardFn, backward_kernels(p), p), true};
}

void run_prepared(PreparedSoftmaxCrossEntropy& prepared, float dloss) {
  const char* fn = prepared.backward ? kBackwardFn : kForwardFn;
  if (prepared.backward) {
    ops::check_finite(fn, "dloss", dloss);
    prepared.call.problem().dloss = dloss;
  }
  check_targets_in_range(fn, prepared.call.problem());
  prepared.call.entry().run(prepared.call.problem());
}

}  // namespace ops

// The calls check the targets where they always did (before the output checks: an input with
// two faults keeps its message), so they run their problem directly rather than as a prepared
// call, whose runs check the targets first.
void softmax_cross_entropy_forward(const TensorView& logits, const TensorView& targets, const TensorView& loss,
                                   const TensorView& lse) {
  const ops::SoftmaxCrossEntropyProblem p = forward_problem(logits, targets, loss, lse);
  ops::PreparedCall<ops::SoftmaxCrossEntropyProblem, ops::SoftmaxCrossEntropyFn> call(kForwardFn, forward_kernels(p),
                                                                                      p);
  call.entry().run(p);
}

void softmax_cross_entropy_backward(const TensorView& logits, const TensorView& targets, const TensorView& lse,
                                    float dloss, const TensorView& dlogits) {
  const ops::SoftmaxCrossEntropyProblem p = backward_problem(logits, targets, lse, dloss, dlogits);
  ops::PreparedCall<ops::SoftmaxCrossEntropyProblem, ops::SoftmaxCrossEntropyFn> call(kBackwardFn, backward_kernels(p),
                                                                                      p);
  call.entry().run(p);
}

std::string softmax_cross_entropy_forward_check(const TensorView& logits, const TensorView& targets,
                                                const TensorView& loss, const TensorView& lse) noexcept {
  return ops::check_message("softmax_cross_entropy_forward", [&] { forward_problem(logits, targets, loss, lse); });
}

std::string softmax_cross_entropy_forward_descriptor_check(const TensorView& logits, const TensorView& targets,
                                                           const TensorView& loss, const TensorView& lse) noexcept {
  return ops::check_message("softmax_cross_entropy_forward",
                            [&] { forward_problem(logits, targets, loss, lse, ops::Stage::descriptor); });
}

std::string softmax_cross_entropy_backward_check(const TensorView& logits, const TensorView& targets,
                                                 const TensorView& lse, float dloss,
                                                 const TensorView& dlogits) noexcept {
  return ops::check_message("softmax_cross_entropy_backward",
                            [&] { backward_problem(logits, targets, lse, dloss, dlogits); });
}

std::string softmax_cross_entropy_backward_descriptor_check(const TensorView& logits, const TensorView& targets,
                                                            const TensorView& lse, float dloss,
                                                            const TensorView& dlogits) noexcept {
  return ops::check_message("softmax_cross_entropy_backward",
                            [&] { backward_problem(logits, targets, lse, dloss, dlogits, ops::Stage::descriptor); });
}

const char* softmax_cross_entropy_forward_kernel_name(const TensorView& logits, const TensorView& targets,
                                                      const TensorView& loss, const TensorView& lse) {
  const ops::SoftmaxCrossEntropyProblem p = forward_problem(logits, targets, loss, lse);
  return ops::select_kernel(forward_kernels(p), p).name;
}

const char* softmax_cross_entropy_backward_kernel_name(const TensorView& logits, const TensorView& targets,
                                                       const TensorView& lse, float dloss, const TensorView& dlogits) {
  const ops::SoftmaxCrossEntropyProblem p = backward_problem(logits, targets, lse, dloss, dlogits);
  return ops::select_kernel(backward_kernels(p), p).name;
}

}  // namespace ampkit
