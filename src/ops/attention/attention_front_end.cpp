// Front end of attention_forward / attention_backward (ops layer): validates and decodes the call
// (attention_validate.cpp), then runs the first entry of the direction's kernel list that takes
// the problem. Nothing is written on a rejected call; an empty problem (batch or seq 0, or no
// gradient requested) runs no kernel. Also the check, kernel name and statuses queries.
#include "ampkit/ops/attention.hpp"

#include "ops/attention/attention_problem.hpp"
#include "ops/check_message.hpp"

namespace ampkit {

void attention_forward(const AttentionForwardArgs& args) {
  const ops::AttentionForwardProblem p = ops::validate_attention_forward(args);
  if (p.batch == 0 || p.seq == 0) return;
  ops::select_kernel(ops::attention_forward_kernels(), p).run(p);
}

void attention_backward(const AttentionBackwardArgs& args) {
  const ops::AttentionBackwardProblem p = ops::validate_attention_backward(args);
  if (p.batch == 0 || p.seq == 0) return;
  if (p.dq.data == nullptr && p.dk.data == nullptr && p.dv.data == nullptr) return;
  ops::select_kernel(ops::attention_backward_kernels(), p).run(p);
}

std::string attention_check(const AttentionForwardArgs& args) noexcept {
  return ops::check_message("attention_forward", [&] { ops::validate_attention_forward(args); });
}

std::string attention_check(const AttentionBackwardArgs& args) noexcept {
  return ops::check_message("attention_backward", [&] { ops::validate_attention_backward(args); });
}

const char* attention_kernel_name(const AttentionForwardArgs& args) {
  const ops::AttentionForwardProblem p = ops::validate_attention_forward(args);
  return ops::select_kernel(ops::attention_forward_kernels(), p).name;
}

const char* attention_kernel_name(const AttentionBackwardArgs& args) {
  const ops::AttentionBackwardProblem p = ops::validate_attention_backward(args);
  return ops::select_kernel(ops::attention_backward_kernels(), p).name;
}

std::vector<KernelStatus> attention_kernel_statuses(const AttentionForwardArgs& args) {
  return ops::kernel_statuses(ops::attention_forward_kernels(), ops::validate_attention_forward(args));
}

std::vector<KernelStatus> attention_kernel_statuses(const AttentionBackwardArgs& args) {
  return ops::kernel_statuses(ops::attention_backward_kernels(), ops::validate_attention_backward(args));
}

}  // namespace ampkit
