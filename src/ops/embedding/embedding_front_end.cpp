// Front end of embedding_forward and embedding_backward (ops layer): validates every argument
// (include/ampkit/ops/embedding.hpp) including every id against the vocabulary, builds the
// direction's problem and runs the first entry of its kernel list that takes it; the *_check and
// *_kernel_name queries decode the same way. Nothing is written on a rejected call.
#include "ampkit/ops/embedding.hpp"

#include <cstdint>
#include <new>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "core/checked_math.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/embedding/embedding_kernels.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/operand_checks.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit {
namespace {

void check_dims(const char* fn, const char* name, const TensorView& v) {
  for (int i = 0; i < v.rank; ++i)
    if (v.shape[i] < 0) fail(fn, name, " dimension ", i, " must be >= 0, but got ", v.shape_string());
}

// A [rows, n] operand whose byte extent (row strides included) fits in int64.
void check_extent(const char* fn, const char* name, const ops::RowsOperand& r) {
  if (r.empty()) return;
  const auto last = checked_mul(r.rows - 1, r.row_stride);
  const auto elements = last ? checked_add(*last, r.n) : std::nullopt;
  const auto bytes = elements ? checked_mul(*elements, static_cast<std::int64_t>(dtype_size(r.dtype))) : std::nullopt;
  if (!bytes)
    fail(fn, name, " spans more bytes than int64 can count (", r.rows, " rows ", r.row_stride, " elements apart)");
}

// ids: [tokens] i32, contiguous.
ops::RowsOperand check_ids(const char* fn, const TensorView& ids, const ops::OnDevice& dev, ops::Stage stage) {
  ops::check_dtype_on(fn, "ids", ids, DType::i32, dev);
  ops::check_rank(fn, "ids", ids, 1);
  check_dims(fn, "ids", ids);
  return ops::as_flat_on(fn, "ids", ids, dev, stage);
}

// A [rows, dim] float operand, last dim contiguous, any row stride >= dim.
ops::RowsOperand check_matrix(const char* fn, const char* name, const TensorView& view, const ops::OnDevice& dev,
                              ops::Stage stage) {
  ops::check_float_operand_on(fn, name, view, dev);
  ops::check_rank(fn, name, view, 2);
  check_dims(fn, name, view);
  const ops::RowsOperand r = ops::as_rows_on(fn, name, view, dev, stage);
  check_extent(fn, name, r);
  return r;
}

// The ids as host memory for the range check: themselves on the cpu; on a GPU a copy (the
// calling thread's stream, waited for), so a bad id is an Error before anything is enqueued.
const std::int32_t* host_ids(const char* fn, const std::int32_t* id, std::int64_t tokens, Device device, int index) {
  if (device != Device::cuda || tokens == 0) return id;
  thread_local std::vector<std::int32_t> copy;
  try {
    copy.resize(static_cast<std::size_t>(tokens));
  } catch (const std::bad_alloc&) {
    fail_with(ErrorKind::out_of_memory, fn, "could not allocate a host copy of ", tokens, " ids");
  }
  cuda_copy_to_host(copy.data(), id, static_cast<std::size_t>(tokens) * sizeof(std::int32_t), index);
  return copy.data();
}

void check_shape_2d(const char* fn, const char* name, const TensorView& view, std::int64_t rows, std::int64_t cols,
                    const char* what) {
  if (view.shape[0] != rows || view.shape[1] != cols)
    fail(fn, name, " must have shape ", what, " = [", rows, ", ", cols, "], but got ", view.shape_string());
}

// Every id of a problem in [0, vocab); reads the ids only (stage 2, and every run of a prepared
// call: their contents change between runs).
template <class Problem>
void check_ids_in_range(const char* fn, const Problem& p) {
  const std::int32_t* ids = host_ids(fn, p.ids, p.tokens, p.device, p.device_index);
  for (std::int64_t t = 0; t < p.tokens; ++t)
    if (ids[t] < 0 || ids[t] >= p.vocab) fail(fn, "ids[", t, "] = ", ids[t], " is out of range [0, ", p.vocab, ")");
}

// check_values: false for a prepared call, whose runs check the ids.
ops::EmbeddingForwardProblem forward_problem(const TensorView& ids, const TensorView& table, const TensorView& out,
                                             ops::Stage stage = ops::Stage::call, bool check_values = true) {
  const char* fn = "embedding_forward";
  const ops::OnDevice dev = ops::call_device(fn, "table", table);
  const ops::RowsOperand rids = check_ids(fn, ids, dev, stage);
  const ops::RowsOperand rtable = check_matrix(fn, "table", table, dev, stage);
  const ops::RowsOperand rout = check_matrix(fn, "out", out, dev, stage);
  const std::int64_t tokens = ids.shape[0], vocab = table.shape[0], dim = table.shape[1];
  check_shape_2d(fn, "out", out, tokens, dim, "[tokens, dim] (ids' length, table's dim)");
  ops::check_disjoint(fn, "out", rout, "ids", rids, stage);
  ops::check_disjoint(fn, "out", rout, "table", rtable, stage);
  const auto* id = static_cast<const std::int32_t*>(rids.data);
  ops::EmbeddingForwardProblem p;
  p.device = dev.device;
  p.device_index = dev.index;
  p.tokens = tokens;
  p.vocab = vocab;
  p.dim = dim;
  p.ids = id;
  p.table = rtable.data;
  p.table_dtype = rtable.dtype;
  p.table_row_stride = rtable.row_stride;
  p.out = rout.data;
  p.out_dtype = rout.dtype;
  p.out_row_stride = rout.row_stride;
  if (stage == ops::Stage::call && check_values) check_ids_in_range(fn, p);  // reads the ids: stage 2
  return p;
}

ops::EmbeddingBackwardProblem backward_problem(const TensorView& ids, const TensorView& dout, const TensorView& dtable,
                                               bool accumulate, ops::Stage stage = ops::Stage::call,
                                               bool check_values = true) {
  const char* fn = "embedding_backward";
  const ops::OnDevice dev = ops::call_device(fn, "dtable", dtable);
  const ops::RowsOperand rids = check_ids(fn, ids, dev, stage);
  const ops::RowsOperand rdout = check_matrix(fn, "dout", dout, dev, stage);
  const ops::RowsOperand rdtable = check_matrix(fn, "dtable", dtable, dev, stage);
  const std::int64_t tokens = ids.shape[0], vocab = dtable.shape[0], dim = dtable.shape[1];
  check_shape_2d(fn, "dout", dout, tokens, dim, "[tokens, dim] (ids' length, dtable's dim)");
  ops::check_disjoint(fn, "dtable", rdtable, "ids", rids, stage);
  ops::check_disjoint(fn, "dtable", rdtable, "dout", rdout, stage);
  const auto* id = static_cast<const std::int32_t*>(rids.data);
  ops::EmbeddingBackwardProblem p;
  p.device = dev.device;
  p.device_index = dev.index;
  p.tokens = tokens;
  p.vocab = vocab;
  p.dim = dim;
  p.ids = id;
  p.dout = rdout.data;
  p.dout_dtype = rdout.dtype;
  p.dout_row_stride = rdout.row_stride;
  p.dtable = rdtable.data;
  p.dtable_dtype = rdtable.dtype;
  p.dtable_row_stride = rdtable.row_stride;
  p.accumulate = accumulate;
  if (stage == ops::Stage::call && check_values) check_ids_in_range(fn, p);  // reads the ids: stage 2
  return p;
}

std::span<const ops::EmbeddingForwardEntry> forward_kernels(const ops::EmbeddingForwardProblem& p) {
  return ops::backend(p.device).kernels().embedding_forward;
}

std::span<const ops::EmbeddingBackwardEntry> backward_kernels(const ops::EmbeddingBackwardProblem& p) {
  return ops::backend(p.device).kernels().embedding_backward;
}

}  // namespace

namespace ops {

PreparedEmbeddingForward prepare_embedding_forward(const TensorView& ids, const TensorView& table,
                                                   const TensorView& out) {
  const EmbeddingForwardProblem p = forward_problem(ids, table, out, Stage::call, false);
  return PreparedEmbeddingForward("embedding_forward", forward_kernels(p), p);
}

PreparedEmbeddingBackward prepare_embedding_backward(const TensorView& ids, const TensorView& dout,
                                                     const TensorView& dtable, bool accumulate) {
  const EmbeddingBackwardProblem p = backward_problem(ids, dout, dtable, accumulate, Stage::call, false);
  return PreparedEmbeddingBackward("embedding_backward", backward_kernels(p), p);
}

void run_prepared(PreparedEmbeddingForward& call) {
  const EmbeddingForwardProblem& p = call.problem();
  check_ids_in_range("embedding_forward", p);
  if (p.tokens == 0 || p.dim == 0) return;
  call.entry().run(p);
}

void run_prepared(PreparedEmbeddingBackward& call) {
  const EmbeddingBackwardProblem& p = call.problem();
  check_ids_in_range("embedding_backward", p);
  if (p.vocab == 0 || p.dim == 0) return;  // tokens == 0 too (no id is in range)
  call.entry().run(p);
}

}  // namespace ops

void embedding_forward(const TensorView& ids, const TensorView& table, const TensorView& out) {
  ops::PreparedEmbeddingForward call = ops::prepare_embedding_forward(ids, table, out);
  ops::run_prepared(call);
}

void embedding_backward(const TensorView& ids, const TensorView& dout, const TensorView& dtable, bool accumulate) {
  ops::PreparedEmbeddingBackward call = ops::prepare_embedding_backward(ids, dout, dtable, accumulate);
  ops::run_prepared(call);
}

std::string embedding_forward_check(const TensorView& ids, const TensorView& table, const TensorView& out) noexcept {
  return ops::check_message("embedding_forward", [&] { forward_problem(ids, table, out); });
}

std::string embedding_forward_descriptor_check(const TensorView& ids, const TensorView& table,
                                               const TensorView& out) noexcept {
  return ops::check_message("embedding_forward", [&] { forward_problem(ids, table, out, ops::Stage::descriptor); });
}

std::string embedding_backward_check(const TensorView& ids, const TensorView& dout, const TensorView& dtable,
                                     bool accumulate) noexcept {
  return ops::check_message("embedding_backward", [&] { backward_problem(ids, dout, dtable, accumulate); });
}

std::string embedding_backward_descriptor_check(const TensorView& ids, const TensorView& dout, const TensorView& dtable,
                                                bool accumulate) noexcept {
  return ops::check_message("embedding_backward",
                            [&] { backward_problem(ids, dout, dtable, accumulate, ops::Stage::descriptor); });
}

const char* embedding_forward_kernel_name(const TensorView& ids, const TensorView& table, const TensorView& out) {
  const ops::EmbeddingForwardProblem p = forward_problem(ids, table, out);
  return ops::select_kernel(forward_kernels(p), p).name;
}

const char* embedding_backward_kernel_name(const TensorView& ids, const TensorView& dout, const TensorView& dtable,
                                           bool accumulate) {
  const ops::EmbeddingBackwardProblem p = backward_problem(ids, dout, dtable, accumulate);
  return ops::select_kernel(backward_kernels(p), p).name;
}

}  // namespace ampkit
