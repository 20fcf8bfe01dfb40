// Front end of attention_forward / attention_backward (ops layer): validates and decodes the call
// (attention_validate.cpp) into a prepared call (ops::PreparedAttention*, which the graph keeps
// per node), then runs the first entry of the direction's kernel list that takes
// the problem. Nothing is written on a rejected call; an empty problem (batch or seq 0, or no
// gradient requested) runs no kernel. Also the check, kernel name and statuses queries.
#include "ampkit/ops/attention.hpp"

#include "ops/attention/attention_problem.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit {
namespace {

// The list for the call's device: the CPU one, or the CUDA one (docs/CUDA.md).
std::span<const ops::AttentionForwardEntry> forward_kernels(const ops::AttentionForwardProblem& p) {
  return ops::backend(p.device).kernels().attention_forward;
}

std::span<const ops::AttentionBackwardEntry> backward_kernels(const ops::AttentionBackwardProblem& p) {
  return ops::backend(p.device).kernels().attention_backward;
}

}  // namespace

namespace ops {

PreparedAttentionForward prepare_attention_forward(const AttentionForwardArgs& args) {
  const AttentionForwardProblem p = validate_attention_forward(args);
  return PreparedAttentionForward("attention_forward", forward_kernels(p), p);
}

PreparedAttentionBackward prepare_attention_backward(const AttentionBackwardArgs& args) {
  const AttentionBackwardProblem p = validate_attention_backward(args);
  return PreparedAttentionBackward("attention_backward", backward_kernels(p), p);
}

void run_prepared(PreparedAttentionForward& call) {
  const AttentionForwardProblem& p = call.problem();
  if (p.batch == 0 || p.seq == 0) return;
  call.entry().run(p);
}

void run_prepared(PreparedAttentionBackward& call) {
  const AttentionBackwardProblem& p = call.problem();
  if (p.batch == 0 || p.seq == 0) return;
  if (p.dq.data == nullptr && p.dk.data == nullptr && p.dv.data == nullptr) return;
  call.entry().run(p);
}

}  // namespace ops

void attention_forward(const AttentionForwardArgs& args) {
  ops::PreparedAttentionForward call = ops::prepare_attention_forward(args);
  ops::run_prepared(call);
}

void attention_backward(const AttentionBackwardArgs& args) {
  ops::PreparedAttentionBackward call = ops::prepare_attention_backward(args);
  ops::run_prepared(call);
}

std::string attention_check(const AttentionForwardArgs& args) noexcept {
  return ops::check_message("attention_forward", [&] { ops::validate_attention_forward(args); });
}

std::string attention_check(const AttentionBackwardArgs& args) noexcept {
  return ops::check_message("attention_backward", [&] { ops::validate_attention_backward(args); });
}

std::string attention_descriptor_check(const AttentionForwardArgs& args) noexcept {
  return ops::check_message("attention_forward",
                            [&] { ops::validate_attention_forward(args, ops::Stage::descriptor); });
}

std::string attention_descriptor_check(const AttentionBackwardArgs& args) noexcept {
  return ops::check_message("attention_backward",
                            [&] { ops::validate_attention_backward(args, ops::Stage::descriptor); });
}

const char* attention_kernel_name(const AttentionForwardArgs& args) {
  const ops::AttentionForwardProblem p = ops::validate_attention_forward(args);
  return ops::select_kernel(forward_kernels(p), p).name;
}

const char* attention_kernel_name(const AttentionBackwardArgs& args) {
  const ops::AttentionBackwardProblem p = ops::validate_attention_backward(args);
  return ops::select_kernel(backward_kernels(p), p).name;
}

std::vector<KernelStatus> attention_kernel_statuses(const AttentionForwardArgs& args) {
  const ops::AttentionForwardProblem p = ops::validate_attention_forward(args);
  return ops::kernel_statuses(forward_kernels(p), p);
}

std::vector<KernelStatus> attention_kernel_statuses(const AttentionBackwardArgs& args) {
  const ops::AttentionBackwardProblem p = ops::validate_attention_backward(args);
  return ops::kernel_statuses(backward_kernels(p), p);
}

}  // namespace ampkit
