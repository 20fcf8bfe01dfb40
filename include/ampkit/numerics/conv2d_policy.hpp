// The convolution under the fp16 policy (numerics layer): conv2d_* with Conv2dParams::fp16_mode
// decided by the convolution's own alt-impl choice (set_conv_fp16_alt_impl, else
// MIOPEN_DEBUG_CONVOLUTION_ATTRIB_FP16_ALT_IMPL, else per pass: original forward, alt backward),
// the pass of the calling thread (BackwardPassGuard) and the device model, and the call's report
// added to the process-wide convolution fp16 counters. Independent of the GEMM's choice
// (ROCBLAS_INTERNAL_FP16_ALT_IMPL): one may be alt while the other is original. The convolution
// kernels never read the policy. See docs/NUMERICS.md, "Convolution".
#pragma once

#include <cstdint>

#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/ops/conv2d.hpp"

namespace ampkit {

/// conv_fp16_mode() for f16 activations, else Fp16Mode::exact without reading the environment.
/// Resolve on the thread that issues the call (worker threads do not see its guard). Throws like
/// conv_fp16_mode (only for f16).
Fp16Mode conv_fp16_mode_for(DType activations);

/// The conv2d calls with params.fp16_mode = conv_fp16_mode_for(activation dtype) (overriding
/// the caller's), the report added to the convolution counters. The backward calls resolve the
/// pass like every policy call: under a BackwardPassGuard(true) they get the backward mode (the
/// graph runs backward nodes under the guard). `report` may be null. Throws what the policy or the
/// call throws (outputs and counters untouched then).
void conv2d_forward_with_policy(Conv2dForwardArgs args, Conv2dReport* report = nullptr);
void conv2d_backward_data_with_policy(Conv2dBackwardDataArgs args, Conv2dReport* report = nullptr);
void conv2d_backward_weight_with_policy(Conv2dBackwardWeightArgs args, Conv2dReport* report = nullptr);

/// Counters of the f16 convolution calls made with one mode (the GEMM's Fp16ModeCounters,
/// counted apart).
struct Conv2dFp16ModeCounters {
  std::int64_t calls = 0;
  std::int64_t subnormal_inputs = 0;   // f16 subnormal elements of the two operands read
  std::int64_t subnormal_outputs = 0;  // f16 outputs that rounded to a subnormal
};
struct Conv2dFp16Counters {
  Conv2dFp16ModeCounters exact, flush, alt;
  const Conv2dFp16ModeCounters& operator[](Fp16Mode mode) const {
    return mode == Fp16Mode::flush ? flush : mode == Fp16Mode::alt ? alt : exact;
  }
  std::int64_t calls() const { return exact.calls + flush.calls + alt.calls; }
};

/// Adds one call's report (ignored unless report.fp16). Throws Error on an invalid mode or
/// negative counts (nothing added then).
void add_conv2d_fp16_report(const Conv2dReport& report);
/// The convolution counters now (each field read atomically).
Conv2dFp16Counters conv2d_fp16_counters();
/// Sets every convolution counter to zero (the GEMM's are reset_fp16_counters).
void reset_conv2d_fp16_counters();

}  // namespace ampkit
