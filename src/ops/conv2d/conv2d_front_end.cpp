// Convolution front end (ops layer): the public calls of include/ampkit/ops/conv2d.hpp. Each call
// is validated once (conv2d_validate.cpp) into a Conv2dProblem, the kernel is selected once from
// the device's list of its pass, and empty problems are handled here. Also the non-throwing
// checks, the kernel-name and the kernel-status queries. Nothing is written when an argument is
// rejected.
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/conv2d.hpp"
#include "ops/backend.hpp"
#include "ops/check_message.hpp"
#include "ops/conv2d/conv2d_front_end.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit {
namespace ops {

std::span<const Conv2dEntry> conv2d_kernels(Conv2dPass pass, Device device) {
  const KernelLists& lists = backend(device).kernels();
  if (pass == Conv2dPass::forward) return lists.conv2d_forward;
  if (pass == Conv2dPass::backward_data) return lists.conv2d_backward_data;
  return lists.conv2d_backward_weight;
}

void run_conv2d(const Conv2dProblem& p, const Conv2dEntry& entry, Conv2dReport* report) {
  Conv2dCounters counters;
  const bool nothing = p.pass == Conv2dPass::backward_weight ? (p.dw == nullptr && p.dbias == nullptr) : p.n == 0;
  if (!nothing) entry.run(p, counters);
  if (report != nullptr) {
    report->kernel = nothing ? "" : entry.name;
    report->fp16 = p.fp16;
    report->fp16_mode = p.fp16_mode;
    report->fp16_subnormal_inputs = counters.fp16_subnormal_inputs;
    report->fp16_subnormal_outputs = counters.fp16_subnormal_outputs;
  }
}

}  // namespace ops

namespace {

const char* function_name(ops::Conv2dPass pass) {
  if (pass == ops::Conv2dPass::forward) return ops::kConv2dForwardFn;
  if (pass == ops::Conv2dPass::backward_data) return ops::kConv2dBackwardDataFn;
  return ops::kConv2dBackwardWeightFn;
}

// The problem's list; a device without convolution kernels (a CUDA build without cuDNN) is
// unsupported, with the reason.
std::span<const ops::Conv2dEntry> list_for(const ops::Conv2dProblem& p) {
  const auto list = ops::conv2d_kernels(p.pass, p.device);
  if (list.empty())
    fail_with(ErrorKind::unsupported, function_name(p.pass), "no convolution kernels for ", device_name(p.device),
              " in this build");
  return list;
}

const ops::Conv2dEntry& select(const ops::Conv2dProblem& p) {
  const ops::Conv2dEntry& chosen = ops::select_kernel(list_for(p), p);
  if (const char* why = ops::kernel_unavailable_reason(chosen.needs))
    fail_with(ErrorKind::unsupported, function_name(p.pass), "no kernel for ", device_name(p.device), ": ", chosen.name,
              " ", why);
  return chosen;
}

template <class Args>
void call(const Args& args, Conv2dReport* report) {
  const ops::Conv2dProblem p = ops::validate_conv2d(args);
  ops::run_conv2d(p, select(p), report);
}

template <class Args>
const char* name_of(const Args& args) {
  return select(ops::validate_conv2d(args)).name;
}

template <class Args>
std::vector<KernelStatus> statuses_of(const Args& args) {
  const ops::Conv2dProblem p = ops::validate_conv2d(args);
  return ops::kernel_statuses(list_for(p), p);
}

}  // namespace

void conv2d_forward(const Conv2dForwardArgs& args, Conv2dReport* report) { call(args, report); }
void conv2d_backward_data(const Conv2dBackwardDataArgs& args, Conv2dReport* report) { call(args, report); }
void conv2d_backward_weight(const Conv2dBackwardWeightArgs& args, Conv2dReport* report) { call(args, report); }

std::string conv2d_check(const Conv2dForwardArgs& args) noexcept {
  return ops::check_message(ops::kConv2dForwardFn, [&] { ops::validate_conv2d(args); });
}
std::string conv2d_check(const Conv2dBackwardDataArgs& args) noexcept {
  return ops::check_message(ops::kConv2dBackwardDataFn, [&] { ops::validate_conv2d(args); });
}
std::string conv2d_check(const Conv2dBackwardWeightArgs& args) noexcept {
  return ops::check_message(ops::kConv2dBackwardWeightFn, [&] { ops::validate_conv2d(args); });
}
std::string conv2d_descriptor_check(const Conv2dForwardArgs& args) noexcept {
  return ops::check_message(ops::kConv2dForwardFn, [&] { ops::validate_conv2d(args, ops::Stage::descriptor); });
}
std::string conv2d_descriptor_check(const Conv2dBackwardDataArgs& args) noexcept {
  return ops::check_message(ops::kConv2dBackwardDataFn, [&] { ops::validate_conv2d(args, ops::Stage::descriptor); });
}
std::string conv2d_descriptor_check(const Conv2dBackwardWeightArgs& args) noexcept {
  return ops::check_message(ops::kConv2dBackwardWeightFn, [&] { ops::validate_conv2d(args, ops::Stage::descriptor); });
}

const char* conv2d_kernel_name(const Conv2dForwardArgs& args) { return name_of(args); }
const char* conv2d_kernel_name(const Conv2dBackwardDataArgs& args) { return name_of(args); }
const char* conv2d_kernel_name(const Conv2dBackwardWeightArgs& args) { return name_of(args); }

std::vector<KernelStatus> conv2d_kernel_statuses(const Conv2dForwardArgs& args) { return statuses_of(args); }
std::vector<KernelStatus> conv2d_kernel_statuses(const Conv2dBackwardDataArgs& args) { return statuses_of(args); }
std::vector<KernelStatus> conv2d_kernel_statuses(const Conv2dBackwardWeightArgs& args) { return statuses_of(args); }

}  // namespace ampkit
