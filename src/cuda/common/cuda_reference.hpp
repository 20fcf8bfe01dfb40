// The reference entry that ends every CUDA kernel list (CUDA layer, internal): it waits for the
// calling thread's stream, stages every operand of the problem to host memory, runs the op's CPU
// reference entry (the last entry of the CPU backend's list) there, and copies the operands back.
// Slow and obviously right: its bits are the CPU reference's. Selection never reaches it on the
// fast path (the entry before it takes every valid problem); set_reference_kernels(true) selects
// it, and the CUDA tests compare each fast entry with it. Operands that overlap (in place, column
// slices of one packed buffer) are staged as one region, so aliasing is kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ops/kernel_lists.hpp"

namespace ampkit::cuda {

/// The host copies of a problem's device operands, merged into disjoint regions.
class HostStaging {
 public:
  /// Waits for the calling thread's stream of `device_index` (its queued work writes the operands).
  explicit HostStaging(int device_index);
  /// Registers `bytes` bytes of device memory from `ptr` (null or 0 bytes: nothing).
  void add(const void* ptr, std::size_t bytes);
  /// Merges the registered ranges and copies each region to host memory.
  void stage_in();
  /// The host address of device address `ptr` (null for null or an operand of 0 bytes).
  void* host(const void* ptr) const;
  /// Copies every region back to the device, and waits.
  void stage_out();

 private:
  struct Region {
    std::uintptr_t begin = 0, end = 0;
    std::vector<std::byte> bytes;
  };
  int device_index_;
  std::vector<Region> regions_;
};

/// Bytes spanned by `rows` rows of `n` elements of `t`, `row_stride` elements apart (0: broadcast).
std::size_t rows_bytes(std::int64_t rows, std::int64_t n, std::int64_t row_stride, DType t);

// Every device operand of a problem, as f(pointer field, bytes it spans).
template <class F>
void for_each_operand(ops::GeluProblem& p, F&& f) {
  f(p.x, rows_bytes(p.rows, p.n, p.x_row_stride, p.x_dtype));
  if (p.backward) f(p.dy, rows_bytes(p.rows, p.n, p.dy_row_stride, p.dy_dtype));
  f(p.out, rows_bytes(p.rows, p.n, p.out_row_stride, p.out_dtype));
}
template <class F>
void for_each_operand(ops::ElementwiseProblem& p, F&& f) {
  f(p.a.data, rows_bytes(p.rows, p.n, p.a.row_stride, p.a.dtype));
  f(p.b.data, rows_bytes(p.rows, p.n, p.b.row_stride, p.b.dtype));
  f(p.out, rows_bytes(p.rows, p.n, p.out_row_stride, p.out_dtype));
}
template <class F>
void for_each_operand(ops::ConvertProblem& p, F&& f) {
  f(p.src, rows_bytes(1, p.n, 0, p.from));
  f(p.dst, rows_bytes(1, p.n, 0, p.to));
}
template <class F>
void for_each_operand(ops::NormForwardProblem& p, F&& f) {
  f(p.x, rows_bytes(p.rows, p.n, p.n, p.x_dtype));
  f(p.gamma, rows_bytes(1, p.n, 0, p.param_dtype));
  f(p.beta, rows_bytes(1, p.n, 0, p.param_dtype));
  f(p.y, rows_bytes(p.rows, p.n, p.n, p.x_dtype));
  f(p.mean, rows_bytes(1, p.rows, 0, DType::f32));
  f(p.rstd, rows_bytes(1, p.rows, 0, DType::f32));
}
template <class F>
void for_each_operand(ops::NormBackwardProblem& p, F&& f) {
  f(p.dy, rows_bytes(p.rows, p.n, p.n, p.x_dtype));
  f(p.x, rows_bytes(p.rows, p.n, p.n, p.x_dtype));
  f(p.mean, rows_bytes(1, p.rows, 0, DType::f32));
  f(p.rstd, rows_bytes(1, p.rows, 0, DType::f32));
  f(p.gamma, rows_bytes(1, p.n, 0, p.param_dtype));
  f(p.dx, rows_bytes(p.rows, p.n, p.n, p.x_dtype));
  f(p.dgamma, rows_bytes(1, p.n, 0, p.param_dtype));
  f(p.dbeta, rows_bytes(1, p.n, 0, p.param_dtype));
}
template <class F>
void for_each_operand(ops::SoftmaxCrossEntropyProblem& p, F&& f) {
  f(p.logits, rows_bytes(p.rows, p.classes, p.logits_row_stride, p.logits_dtype));
  f(p.targets, static_cast<std::size_t>(p.rows) * sizeof(std::int32_t));
  f(p.loss, sizeof(float));
  f(p.lse, static_cast<std::size_t>(p.rows) * sizeof(float));
  f(p.dlogits, rows_bytes(p.rows, p.classes, p.dlogits_row_stride, p.dlogits_dtype));
}
template <class F>
void for_each_operand(ops::EmbeddingForwardProblem& p, F&& f) {
  f(p.ids, static_cast<std::size_t>(p.tokens) * sizeof(std::int32_t));
  f(p.table, rows_bytes(p.vocab, p.dim, p.table_row_stride, p.table_dtype));
  f(p.out, rows_bytes(p.tokens, p.dim, p.out_row_stride, p.out_dtype));
}
template <class F>
void for_each_operand(ops::EmbeddingBackwardProblem& p, F&& f) {
  f(p.ids, static_cast<std::size_t>(p.tokens) * sizeof(std::int32_t));
  f(p.dout, rows_bytes(p.tokens, p.dim, p.dout_row_stride, p.dout_dtype));
  f(p.dtable, rows_bytes(p.vocab, p.dim, p.dtable_row_stride, p.dtable_dtype));
}

/// Bytes spanned by a [batch, seq, heads * head_dim] attention operand (a stride of a dim of size
/// 1 is never used).
template <class Operand>
std::size_t attention_bytes(const Operand& o, std::int64_t batch, std::int64_t seq, std::int64_t cols) {
  if (o.data == nullptr || batch <= 0 || seq <= 0) return 0;
  const std::int64_t last = (batch > 1 ? (batch - 1) * o.batch_stride : 0) + (seq > 1 ? (seq - 1) * o.row_stride : 0);
  return static_cast<std::size_t>(last + cols) * dtype_size(o.dtype);
}
template <class F>
void for_each_operand(ops::AttentionForwardProblem& p, F&& f) {
  const std::int64_t cols = p.heads * p.head_dim;
  for (ops::AttentionInput* in : {&p.q, &p.k, &p.v}) f(in->data, attention_bytes(*in, p.batch, p.seq, cols));
  f(p.out.data, attention_bytes(p.out, p.batch, p.seq, cols));
  f(p.lse, static_cast<std::size_t>(p.batch * p.heads * p.seq) * sizeof(float));
}
template <class F>
void for_each_operand(ops::AttentionBackwardProblem& p, F&& f) {
  const std::int64_t cols = p.heads * p.head_dim;
  for (ops::AttentionInput* in : {&p.q, &p.k, &p.v, &p.out, &p.dout})
    f(in->data, attention_bytes(*in, p.batch, p.seq, cols));
  f(p.lse, static_cast<std::size_t>(p.batch * p.heads * p.seq) * sizeof(float));
  for (ops::AttentionOutput* out : {&p.dq, &p.dk, &p.dv}) f(out->data, attention_bytes(*out, p.batch, p.seq, cols));
}

/// Bytes spanned by a column-major rows x cols matrix with leading dimension ld.
inline std::size_t matrix_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, DType t) {
  return rows_bytes(cols, rows, ld, t);
}
template <class F>
void for_each_operand(ops::GemmProblem& p, F&& f) {
  GemmArgs& g = p.args;
  GemmEpilogue& e = g.epilogue;
  const bool ta = g.op_a == Op::T, tb = g.op_b == Op::T;
  f(g.a, matrix_bytes(ta ? g.k : g.m, ta ? g.m : g.k, g.lda, g.a_dtype));
  f(g.b, matrix_bytes(tb ? g.n : g.k, tb ? g.k : g.n, g.ldb, g.b_dtype));
  f(g.c, g.c != nullptr ? matrix_bytes(g.m, g.n, g.ldc, g.c_dtype) : 0);
  f(g.d, matrix_bytes(g.m, g.n, g.ldd, g.d_dtype));
  f(e.aux, p.aux_in || p.aux_out ? matrix_bytes(g.m, g.n, e.aux_ld, e.aux_dtype) : 0);
  f(e.bias, p.has_bias ? matrix_bytes(g.m, 1, 1, e.bias_dtype) : 0);
  const std::int64_t bias_grad_len = p.bias_grad == ops::GemmBiasGrad::cols_of_b ? g.n : g.m;
  f(e.bias_grad, p.bias_grad != ops::GemmBiasGrad::none ? matrix_bytes(bias_grad_len, 1, 1, e.bias_dtype) : 0);
}

/// Runs `p` (device memory of cuda:p.device_index) with the reference entry of `cpu_list` on
/// host copies of its operands.
template <class Problem, class Fn>
void run_reference_on_host(const Problem& p, std::span<const ops::KernelEntry<Problem, Fn>> cpu_list) {
  HostStaging staging(p.device_index);
  Problem host = p;
  for_each_operand(host, [&](auto& ptr, std::size_t bytes) { staging.add(ptr, bytes); });
  staging.stage_in();
  for_each_operand(host, [&](auto& ptr, std::size_t) {
    ptr = static_cast<std::remove_reference_t<decltype(ptr)>>(staging.host(ptr));
  });
  host.device = Device::cpu;
  host.device_index = 0;
  cpu_list.back().run(host);
  staging.stage_out();
}

}  // namespace ampkit::cuda
