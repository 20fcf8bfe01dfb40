// The LayerNorm / RMSNorm cases of `ampkit check kernels` (tools layer, check/; norm_check.cpp).
#pragma once

#include <cstdint>

#include "ampkit/device/cpu.hpp"
#include "tools/ampkit/check/check_result.hpp"

namespace ampkit::tools::check {

/// Runs every norm case (forward and backward) at `isa` and at ref, adding one result per op and
/// kernel. Leaves the ISA cap set; the caller restores it.
void check_norms(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);

}  // namespace ampkit::tools::check
