// The one translation of a view GEMM into its column-major call (ops layer, internal), for a
// caller that has validated the call in its own terms (Linear: its own messages, one validation
// pass) and so must not pay for gemm(GemmViewArgs)'s view checks a second time.
#pragma once

#include "ampkit/ops/gemm_views.hpp"

namespace ampkit::ops {

/// The GemmArgs that gemm(args) runs (to_gemm_args), without its checks: args must be valid (a
/// caller that validated them); on invalid args the result is unspecified but gemm(GemmArgs)
/// still rejects anything it cannot run. Reads only the views' metadata; no allocation.
GemmArgs column_major_gemm(const GemmViewArgs& args) noexcept;

}  // namespace ampkit::ops
