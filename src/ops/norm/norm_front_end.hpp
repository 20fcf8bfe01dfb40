// The LayerNorm/RMSNorm front end's internal interface (ops layer): decode and validate a call
// into a kernel problem (norm_validate.cpp), and run a problem on one entry of a kernel list
// (norm_front_end.cpp). The public calls select the entry from the list; the tests pass each
// entry of the list in turn.
#pragma once

#include "ampkit/ops/norm.hpp"
#include "ops/check_stage.hpp"
#include "ops/norm/norm_kernels.hpp"

namespace ampkit::ops {

/// "layer_norm_forward", "rms_norm_backward", ...
const char* norm_function_name(NormKind kind, bool backward);

/// Validates a forward call and decodes it (rows, n, pointers). Throws Error naming `fn`.
ops::NormForwardProblem validate_norm_forward(const char* fn, NormKind kind, const NormForwardArgs& args,
                                              Stage stage = Stage::call);
/// Validates a backward call and decodes it. Throws Error naming `fn`.
ops::NormBackwardProblem validate_norm_backward(const char* fn, NormKind kind, const NormBackwardArgs& args,
                                                Stage stage = Stage::call);

/// The kernel lists of `kind` on `device` (the problem's).
std::span<const ops::NormForwardEntry> norm_forward_kernels(NormKind kind, Device device = Device::cpu);
std::span<const ops::NormBackwardEntry> norm_backward_kernels(NormKind kind, Device device = Device::cpu);

/// Runs a validated problem on `entry` (rows = 0 and "nothing requested" handled here, without
/// the kernel). The entry must be usable on this machine.
void run_norm_forward(const ops::NormForwardProblem& problem, const ops::NormForwardEntry& entry);
void run_norm_backward(const ops::NormBackwardProblem& problem, const ops::NormBackwardEntry& entry);

}  // namespace ampkit::ops
