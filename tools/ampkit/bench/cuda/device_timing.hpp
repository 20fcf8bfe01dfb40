// Timing of GPU work for `ampkit bench gemm|norm --device cuda` (tools layer, bench/cuda/): calls
// are enqueued back to back between two waits for the stream, so a sample measures the GPU's
// time per call (plus the launch cost of small calls); the median of the samples is reported.
// Also the device-to-device copy bandwidth, the ceiling the norm and epilogue figures are read
// against (measured in the same run).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ampkit/device/cuda.hpp"
#include "tools/ampkit/bench/timing.hpp"

namespace ampkit::tools::bench {

/// Median milliseconds per call of fn() (which enqueues GPU work on ampkit's stream of GPU 0).
template <typename Fn>
double device_ms(Fn&& fn, int samples = 5, double min_sample_ms = 25.0) {
  for (int i = 0; i < 3; ++i) fn();
  cuda_synchronize();
  std::int64_t calls = 1;
  for (;;) {  // calibrate: a sample of at least min_sample_ms
    Timer t;
    for (std::int64_t i = 0; i < calls; ++i) fn();
    cuda_synchronize();
    const double ms = t.elapsed_ms();
    if (ms >= min_sample_ms || calls >= (1 << 20)) break;
    calls = ms <= 0.01
                ? calls * 16
                : std::max<std::int64_t>(
                      calls + 1, static_cast<std::int64_t>(static_cast<double>(calls) * min_sample_ms * 1.2 / ms));
  }
  std::vector<double> per_call;
  for (int s = 0; s < samples; ++s) {
    Timer t;
    for (std::int64_t i = 0; i < calls; ++i) fn();
    cuda_synchronize();
    per_call.push_back(t.elapsed_ms() / static_cast<double>(calls));
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

/// Device-to-device copy bandwidth in GB/s (bytes read + bytes written per second) of a `bytes`
/// copy on GPU 0.
double measure_copy_gbps(std::size_t bytes);

}  // namespace ampkit::tools::bench
