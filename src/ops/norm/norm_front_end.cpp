// LayerNorm/RMSNorm front end (ops layer): the public calls of include/ampkit/ops/norm.hpp.
// Each call is validated once (norm_validate.cpp) into a prepared call (ops::PreparedNormForward /
// Backward, which the graph keeps per node), the kernel is selected once from the device's list,
// and rows = 0 is handled here. Also the
// non-throwing check, the kernel-name and the kernel-status queries. Nothing is written when an
// argument is rejected.
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/norm.hpp"
#include "ops/backend.hpp"
#include "ops/kernel_lists.hpp"
#include "ops/kernel_registry.hpp"
#include "ops/norm/norm_front_end.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit {
namespace ops {

const char* norm_function_name(NormKind kind, bool backward) {
  if (kind == NormKind::rms) return backward ? "rms_norm_backward" : "rms_norm_forward";
  return backward ? "layer_norm_backward" : "layer_norm_forward";
}

std::span<const ops::NormForwardEntry> norm_forward_kernels(NormKind kind, Device device) {
  const ops::KernelLists& lists = ops::backend(device).kernels();
  return kind == NormKind::rms ? lists.rms_norm_forward : lists.layer_norm_forward;
}

std::span<const ops::NormBackwardEntry> norm_backward_kernels(NormKind kind, Device device) {
  const ops::KernelLists& lists = ops::backend(device).kernels();
  return kind == NormKind::rms ? lists.rms_norm_backward : lists.layer_norm_backward;
}

void run_norm_forward(const ops::NormForwardProblem& p, const ops::NormForwardEntry& entry) {
  if (p.rows == 0) return;
  entry.run(p);
}

void run_norm_backward(const ops::NormBackwardProblem& p, const ops::NormBackwardEntry& entry) {
  if (p.dx == nullptr && p.dgamma == nullptr && p.dbeta == nullptr) return;
  if (p.device == Device::cuda) {  // rows = 0 too: dgamma/dbeta are device memory
    entry.run(p);
    return;
  }
  if (p.rows == 0) {  // sums over no rows: 0, or unchanged when accumulating
    if (!p.accumulate) {
      // n * 4 bytes fits in int64: validation bounds n by INT64_MAX / 8.
      const auto size = static_cast<std::size_t>(p.n) * dtype_size(p.param_dtype);
      if (p.dgamma) std::memset(p.dgamma, 0, size);  // all-zero bits are +0 in every dtype
      if (p.dbeta) std::memset(p.dbeta, 0, size);
    }
    return;
  }
  entry.run(p);
}

PreparedNormForward prepare_norm_forward(NormKind kind, const NormForwardArgs& args) {
  const char* fn = norm_function_name(kind, false);
  const NormForwardProblem p = validate_norm_forward(fn, kind, args);
  return PreparedNormForward(fn, norm_forward_kernels(kind, p.device), p);
}

PreparedNormBackward prepare_norm_backward(NormKind kind, const NormBackwardArgs& args) {
  const char* fn = norm_function_name(kind, true);
  const NormBackwardProblem p = validate_norm_backward(fn, kind, args);
  return PreparedNormBackward(fn, norm_backward_kernels(kind, p.device), p);
}

void run_prepared(PreparedNormForward& call) { run_norm_forward(call.problem(), call.entry()); }

void run_prepared(PreparedNormBackward& call) { run_norm_backward(call.problem(), call.entry()); }

}  // namespace ops

namespace {

template <class Validate>
std::string check_message(const char* fn, Validate validate) noexcept {
  try {
    validate();
    return "";
  } catch (const Error& e) {
    return e.what();
  } catch (...) {
    return std::string(fn) + ": out of memory while validating the arguments";
  }
}

void forward(NormKind kind, const NormForwardArgs& args) {
  ops::PreparedNormForward call = ops::prepare_norm_forward(kind, args);
  ops::run_prepared(call);
}

void backward(NormKind kind, const NormBackwardArgs& args) {
  ops::PreparedNormBackward call = ops::prepare_norm_backward(kind, args);
  ops::run_prepared(call);
}

}  // namespace

void layer_norm_forward(const NormForwardArgs& args) { forward(NormKind::layer, args); }
void layer_norm_backward(const NormBackwardArgs& args) { backward(NormKind::layer, args); }
void rms_norm_forward(const NormForwardArgs& args) { forward(NormKind::rms, args); }
void rms_norm_backward(const NormBackwardArgs& args) { backward(NormKind::rms, args); }

std::string norm_check(NormKind kind, const NormForwardArgs& args) noexcept {
  const char* fn = ops::norm_function_name(kind, false);
  return check_message(fn, [&] { ops::validate_norm_forward(fn, kind, args); });
}

std::string norm_check(NormKind kind, const NormBackwardArgs& args) noexcept {
  const char* fn = ops::norm_function_name(kind, true);
  return check_message(fn, [&] { ops::validate_norm_backward(fn, kind, args); });
}

std::string norm_descriptor_check(NormKind kind, const NormForwardArgs& args) noexcept {
  const char* fn = ops::norm_function_name(kind, false);
  return check_message(fn, [&] { ops::validate_norm_forward(fn, kind, args, ops::Stage::descriptor); });
}

std::string norm_descriptor_check(NormKind kind, const NormBackwardArgs& args) noexcept {
  const char* fn = ops::norm_function_name(kind, true);
  return check_message(fn, [&] { ops::validate_norm_backward(fn, kind, args, ops::Stage::descriptor); });
}

const char* norm_kernel_name(NormKind kind, const NormForwardArgs& args) {
  const auto p = ops::validate_norm_forward(ops::norm_function_name(kind, false), kind, args);
  return ops::select_kernel(ops::norm_forward_kernels(kind, p.device), p).name;
}

const char* norm_kernel_name(NormKind kind, const NormBackwardArgs& args) {
  const auto p = ops::validate_norm_backward(ops::norm_function_name(kind, true), kind, args);
  return ops::select_kernel(ops::norm_backward_kernels(kind, p.device), p).name;
}

std::vector<KernelStatus> norm_kernel_statuses(NormKind kind, const NormForwardArgs& args) {
  const auto p = ops::validate_norm_forward(ops::norm_function_name(kind, false), kind, args);
  return ops::kernel_statuses(ops::norm_forward_kernels(kind, p.device), p);
}

std::vector<KernelStatus> norm_kernel_statuses(NormKind kind, const NormBackwardArgs& args) {
  const auto p = ops::validate_norm_backward(ops::norm_function_name(kind, true), kind, args);
  return ops::kernel_statuses(ops::norm_backward_kernels(kind, p.device), p);
}

}  // namespace ampkit
