// The convolution front end's internal interface (ops layer): decode and validate a call into a
// Conv2dProblem (conv2d_validate.cpp), the three kernel lists, and running a problem on one entry
// (conv2d_front_end.cpp). The public calls select the entry; the tests pass each entry in turn.
#pragma once

#include <span>

#include "ampkit/ops/conv2d.hpp"
#include "ops/check_stage.hpp"
#include "ops/conv2d/conv2d_kernels.hpp"

namespace ampkit::ops {

inline constexpr const char* kConv2dForwardFn = "conv2d_forward";
inline constexpr const char* kConv2dBackwardDataFn = "conv2d_backward_data";
inline constexpr const char* kConv2dBackwardWeightFn = "conv2d_backward_weight";

/// Validates a call and decodes it. Throws Error naming the call (the names above).
Conv2dProblem validate_conv2d(const Conv2dForwardArgs& args, Stage stage = Stage::call);
Conv2dProblem validate_conv2d(const Conv2dBackwardDataArgs& args, Stage stage = Stage::call);
Conv2dProblem validate_conv2d(const Conv2dBackwardWeightArgs& args, Stage stage = Stage::call);

/// The kernel list of `pass` on `device`.
std::span<const Conv2dEntry> conv2d_kernels(Conv2dPass pass, Device device = Device::cpu);

/// Runs a validated problem on `entry` (empty problems handled here: an empty batch writes y/dx
/// not at all and dw/dbias as sums over nothing). Fills `report` when given.
void run_conv2d(const Conv2dProblem& problem, const Conv2dEntry& entry, Conv2dReport* report);

}  // namespace ampkit::ops
