// Times the machine's ceilings (tools layer, bench/): the arithmetic loops of
// peak_loops_avx512bf16.cpp and peak_loops_amx.cpp on 1..N threads (every thread runs the same loop, the whole parallel
// region is timed, total GFLOP/s is reported) and the copy bandwidth. Called by `ampkit bench
// gemm` / `bench linear` / `bench norm` before (and after) their own measurements.
#include "tools/ampkit/bench/peak.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cpu.hpp"
#include "tools/ampkit/bench/timing.hpp"
#include "tools/ampkit/common/memory.hpp"

namespace ampkit::tools::bench {
namespace {

float run_loop(PeakKind kind, std::int64_t iterations) {
  switch (kind) {
    case PeakKind::fma_f32: return peak_loop_fma_f32_avx512(iterations);
    case PeakKind::dpbf16: return peak_loop_dpbf16_avx512bf16(iterations);
    case PeakKind::amx_bf16: return peak_loop_amx_bf16(iterations);
  }
  return 0.0f;
}

double flops_per_iteration(PeakKind kind) {
  switch (kind) {
    case PeakKind::fma_f32: return kPeakChains * 16.0 * 2.0;
    case PeakKind::dpbf16: return kPeakChains * 32.0 * 2.0;
    case PeakKind::amx_bf16: return 4 * 16.0 * 16.0 * 32.0 * 2.0;
  }
  return 0.0;
}

// Milliseconds for `threads` threads to each run `iterations` of the loop.
double time_parallel(PeakKind kind, int threads, std::int64_t iterations, BenchClock clock) {
  volatile float sink = 0.0f;
  Timer t(clock);
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

const char* peak_name(PeakKind kind) {
  switch (kind) {
    case PeakKind::fma_f32: return "fma_f32";
    case PeakKind::dpbf16: return "bf16_dot";
    case PeakKind::amx_bf16: return "amx_bf16";
  }
  return "?";
}

double measure_peak_gflops(PeakKind kind, int threads, int reps, BenchClock clock) {
  const CpuFeatures& f = cpu_features();
  if (!f.avx512 || (kind == PeakKind::dpbf16 && !f.avx512bf16)) return std::nan("");
  if (kind == PeakKind::amx_bf16 && !(f.amx_bf16 && amx_tile_data_permitted())) return std::nan("");
  // Calibrate on one thread: iterations for about 40 ms.
  std::int64_t iterations = 20000;
  for (;;) {
    const double ms = time_parallel(kind, 1, iterations, clock);
    if (ms >= 10.0) {
      iterations = static_cast<std::int64_t>(static_cast<double>(iterations) * 40.0 / ms) + 1;
      break;
    }
    iterations *= 4;
  }
  time_parallel(kind, threads, iterations / 4, clock);  // wakes the threads up
  std::vector<double> times;
  for (int r = 0; r < (reps > 0 ? reps : 1); ++r) times.push_back(time_parallel(kind, threads, iterations, clock));
  const double ms = summarize_samples(times, 1).median_ms;
  // Per CPU-second with the process clock: the threads' CPU time adds up, as in the GEMM cases.
  return flops_per_iteration(kind) * static_cast<double>(iterations) * threads / (ms * 1e6);
}

double copy_bandwidth_gbps(int threads, int reps) {
  if (threads < 1) fail("copy_bandwidth_gbps", "threads must be >= 1, but got ", threads);
  if (reps < 1) fail("copy_bandwidth_gbps", "reps must be >= 1, but got ", reps);
  constexpr std::size_t kBytes = std::size_t{256} << 20;  // per array: 8x the 32 MiB L3
  constexpr std::size_t kBlock = std::size_t{64} << 10;   // memcpy of 64 KiB: ordinary stores
  // Allocated once per process and reused for every thread count (fresh pages are slow).
  static AlignedBuffer a(kBytes, threads);
  static AlignedBuffer b(kBytes, threads);
  auto* src = a.as<unsigned char>();
  auto* dst = b.as<unsigned char>();
  constexpr auto kBlocks = static_cast<std::int64_t>(kBytes / kBlock);
  auto copy = [&] {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < kBlocks; ++i)
      std::memcpy(dst + static_cast<std::size_t>(i) * kBlock, src + static_cast<std::size_t>(i) * kBlock, kBlock);
  };
  MeasureOptions options;
  options.warmup_calls = 2;
  options.min_samples = reps;
  options.max_samples = reps;
  options.min_total_ms = 0.0;
  options.min_sample_ms = 0.0;
  const Measurement m = measure(copy, options);
  return 2.0 * static_cast<double>(kBytes) / (m.median_ms * 1e-3) / 1e9;
}

}  // namespace ampkit::tools::bench
