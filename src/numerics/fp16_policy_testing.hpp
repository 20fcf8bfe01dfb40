// Test hooks of the fp16 policy (numerics layer, internal; not part of the public API in
// include/ampkit): used by the policy tests only (tests/numerics/policy_test_support.hpp).
// Defined in src/numerics/fp16_policy.cpp.
#pragma once

namespace ampkit::detail {

/// Forgets the cached environment so the next use re-reads AMPKIT_FP16_MODEL,
/// ROCBLAS_INTERNAL_FP16_ALT_IMPL and MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL. API choices
/// are kept. Not for concurrent use with calls that resolve modes.
void reload_environment_for_testing();

}  // namespace ampkit::detail
