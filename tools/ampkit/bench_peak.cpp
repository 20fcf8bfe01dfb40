// Times the ceiling loops of bench_peak_avx512bf16.cpp on 1..N threads (tools layer): every
// thread runs the same loop, the whole parallel region is timed, total GFLOP/s is reported.
// Called by `ampkit bench gemm` and `ampkit bench linear` before their own measurements.
#include "tools/ampkit/bench_peak.hpp"

#include <cmath>
#include <vector>

#include "ampkit/device/cpu.hpp"
#include "tools/ampkit/bench_util.hpp"

namespace ampkit::tools::bench {
namespace {

float run_loop(PeakKind kind, std::int64_t iterations) {
  return kind == PeakKind::fma_f32 ? peak_loop_fma_f32_avx512(iterations)
                                   : peak_loop_dpbf16_avx512bf16(iterations);
}

double flops_per_iteration(PeakKind kind) {
  const double per_instruction = kind == PeakKind::fma_f32 ? 16.0 * 2.0 : 32.0 * 2.0;
  return kPeakChains * per_instruction;
}

// Milliseconds for `threads` threads to each run `iterations` of the loop.
double time_parallel(PeakKind kind, int threads, std::int64_t iterations) {
  volatile float sink = 0.0f;
  Timer t;
#pragma omp parallel num_threads(threads)
  {
    const float r = run_loop(kind, iterations);
    if (r == 12345.0f) sink = r;  // keeps the result alive without a shared write
  }
  const double ms = t.elapsed_ms();
  (void)sink;
  return ms;
}

}  // namespace

const char* peak_name(PeakKind kind) { return kind == PeakKind::fma_f32 ? "fma_f32" : "bf16_dot"; }

double measure_peak_gflops(PeakKind kind, int threads, int reps) {
  const CpuFeatures& f = cpu_features();
  if (!f.avx512 || (kind == PeakKind::dpbf16 && !f.avx512bf16)) return std::nan("");
  // Calibrate on one thread: iterations for about 40 ms.
  std::int64_t iterations = 20000;
  for (;;) {
    const double ms = time_parallel(kind, 1, iterations);
    if (ms >= 10.0) {
      iterations = static_cast<std::int64_t>(static_cast<double>(iterations) * 40.0 / ms) + 1;
      break;
    }
    iterations *= 4;
  }
  time_parallel(kind, threads, iterations / 4);  // wakes the threads up
  std::vector<double> times;
  for (int r = 0; r < (reps > 0 ? reps : 1); ++r) times.push_back(time_parallel(kind, threads, iterations));
  const double ms = summarize_samples(times, 1).median_ms;
  return flops_per_iteration(kind) * static_cast<double>(iterations) * threads / (ms * 1e6);
}

}  // namespace ampkit::tools::bench
