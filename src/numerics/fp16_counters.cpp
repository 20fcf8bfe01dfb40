// Process-wide fp16 GEMM counters (numerics layer): calls, subnormal inputs and subnormal
// outputs per Fp16Mode, accumulated from GemmReports by gemm_with_policy (or by callers of gemm
// through add_fp16_gemm_report); read by the numerics report of the tools.
#include <atomic>
#include <cstdint>

#include "ampkit/core/error.hpp"
#include "ampkit/numerics/fp16_policy.hpp"

namespace ampkit {
namespace {

struct AtomicModeCounters {
  std::atomic<std::int64_t> gemm_calls{0};
  std::atomic<std::int64_t> subnormal_inputs{0};
  std::atomic<std::int64_t> subnormal_outputs{0};
};

AtomicModeCounters g_counters[3];  // indexed by Fp16Mode

Fp16ModeCounters load(const AtomicModeCounters& c) {
  Fp16ModeCounters out;
  out.gemm_calls = c.gemm_calls.load(std::memory_order_relaxed);
  out.subnormal_inputs = c.subnormal_inputs.load(std::memory_order_relaxed);
  out.subnormal_outputs = c.subnormal_outputs.load(std::memory_order_relaxed);
  return out;
}

}  // namespace

void add_fp16_gemm_report(const GemmReport& report) {
  if (!report.fp16) return;
  const auto mode = static_cast<int>(report.fp16_mode);
  if (mode < 0 || mode > 2)
    fail("add_fp16_gemm_report", "report.fp16_mode must be exact, flush or alt, but got the value ", mode);
  if (report.fp16_subnormal_inputs < 0)
    fail("add_fp16_gemm_report", "report.fp16_subnormal_inputs must be >= 0, but got ", report.fp16_subnormal_inputs);
  if (report.fp16_subnormal_outputs < 0)
    fail("add_fp16_gemm_report", "report.fp16_subnormal_outputs must be >= 0, but got ", report.fp16_subnormal_outputs);
  AtomicModeCounters& c = g_counters[mode];
  c.gemm_calls.fetch_add(1, std::memory_order_relaxed);
  c.subnormal_inputs.fetch_add(report.fp16_subnormal_inputs, std::memory_order_relaxed);
  c.subnormal_outputs.fetch_add(report.fp16_subnormal_outputs, std::memory_order_relaxed);
}

Fp16Counters fp16_counters() {
  Fp16Counters out;
  out.exact = load(g_counters[static_cast<int>(Fp16Mode::exact)]);
  out.flush = load(g_counters[static_cast<int>(Fp16Mode::flush)]);
  out.alt = load(g_counters[static_cast<int>(Fp16Mode::alt)]);
  return out;
}

void reset_fp16_counters() {
  for (AtomicModeCounters& c : g_counters) {
    c.gemm_calls.store(0, std::memory_order_relaxed);
    c.subnormal_inputs.store(0, std::memory_order_relaxed);
    c.subnormal_outputs.store(0, std::memory_order_relaxed);
  }
}

}  // namespace ampkit
