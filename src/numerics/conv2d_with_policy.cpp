// The convolution under the fp16 policy (numerics layer): conv2d_*_with_policy and the
// convolution's own fp16 counters (include/ampkit/numerics/conv2d_policy.hpp).
#include <atomic>
#include <cstdint>

#include "ampkit/core/error.hpp"
#include "ampkit/numerics/conv2d_policy.hpp"

namespace ampkit {
namespace {

struct ModeAtomics {
  std::atomic<std::int64_t> calls{0}, subnormal_inputs{0}, subnormal_outputs{0};
};
ModeAtomics g_counters[3];  // exact, flush, alt

template <class Args, class Call>
void with_policy(Args& args, DType activations, Conv2dReport* report, Call call) {
  if (activations != DType::f16) {
    call(args, report);  // the policy only concerns f16 activations
    return;
  }
  args.params.fp16_mode = conv_fp16_mode();  // on the issuing thread, once
  Conv2dReport local;
  Conv2dReport& out = report != nullptr ? *report : local;
  call(args, &out);
  add_conv2d_fp16_report(out);
}

}  // namespace

Fp16Mode conv_fp16_mode_for(DType activations) {
  return activations == DType::f16 ? conv_fp16_mode() : Fp16Mode::exact;
}

void conv2d_forward_with_policy(Conv2dForwardArgs args, Conv2dReport* report) {
  with_policy(args, args.x.dtype, report, [](const auto& a, Conv2dReport* r) { conv2d_forward(a, r); });
}
void conv2d_backward_data_with_policy(Conv2dBackwardDataArgs args, Conv2dReport* report) {
  with_policy(args, args.dy.dtype, report, [](const auto& a, Conv2dReport* r) { conv2d_backward_data(a, r); });
}
void conv2d_backward_weight_with_policy(Conv2dBackwardWeightArgs args, Conv2dReport* report) {
  with_policy(args, args.dy.dtype, report, [](const auto& a, Conv2dReport* r) { conv2d_backward_weight(a, r); });
}

void add_conv2d_fp16_report(const Conv2dReport& r) {
  if (!r.fp16) return;
  const int m = static_cast<int>(r.fp16_mode);
  if (m < 0 || m > 2) fail("add_conv2d_fp16_report", "report.fp16_mode must be exact, flush or alt, but got ", m);
  if (r.fp16_subnormal_inputs < 0 || r.fp16_subnormal_outputs < 0)
    fail("add_conv2d_fp16_report", "report counts must be >= 0, but got ", r.fp16_subnormal_inputs, " and ",
         r.fp16_subnormal_outputs);
  if (r.kernel == nullptr || r.kernel[0] == '\0') return;  // nothing ran (an empty batch)
  ModeAtomics& c = g_counters[m];
  c.calls.fetch_add(1, std::memory_order_relaxed);
  c.subnormal_inputs.fetch_add(r.fp16_subnormal_inputs, std::memory_order_relaxed);
  c.subnormal_outputs.fetch_add(r.fp16_subnormal_outputs, std::memory_order_relaxed);
}

Conv2dFp16Counters conv2d_fp16_counters() {
  Conv2dFp16Counters out;
  Conv2dFp16ModeCounters* modes[3] = {&out.exact, &out.flush, &out.alt};
  for (int m = 0; m < 3; ++m) {
    modes[m]->calls = g_counters[m].calls.load(std::memory_order_relaxed);
    modes[m]->subnormal_inputs = g_counters[m].subnormal_inputs.load(std::memory_order_relaxed);
    modes[m]->subnormal_outputs = g_counters[m].subnormal_outputs.load(std::memory_order_relaxed);
  }
  return out;
}

void reset_conv2d_fp16_counters() {
  for (ModeAtomics& c : g_counters) {
    c.calls.store(0, std::memory_order_relaxed);
    c.subnormal_inputs.store(0, std::memory_order_relaxed);
    c.subnormal_outputs.store(0, std::memory_order_relaxed);
  }
}

}  // namespace ampkit
