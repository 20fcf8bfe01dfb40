// The GEMM cases of `ampkit check kernels` (tools layer, check/; gemm_check.cpp).
#pragma once

#include <cstdint>

#include "ampkit/device/cpu.hpp"
#include "tools/ampkit/check/check_result.hpp"

namespace ampkit::tools::check {

/// Runs every GEMM case at `isa` and at ref, adding one result per kernel that ran. Leaves the
/// ISA cap set; the caller restores it.
void check_gemm(Isa isa, std::uint64_t seed, bool quick, CheckResults& results);

}  // namespace ampkit::tools::check
