// Sample statistics of the `ampkit bench` subcommands (tools layer, bench/): median, min and
// pooling of per-call times. See timing.hpp.
#include "tools/ampkit/bench/timing.hpp"

#include "ampkit/core/error.hpp"

namespace ampkit::tools::bench {

Measurement summarize_samples(std::vector<double> times, std::int64_t calls_per_sample) {
  if (times.empty()) fail("summarize_samples", "times must not be empty");
  std::sort(times.begin(), times.end());
  const std::size_t n = times.size();
  Measurement m;
  m.median_ms = n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  m.min_ms = times.front();
  m.samples = static_cast<int>(n);
  m.calls_per_sample = calls_per_sample;
  m.per_call_ms = std::move(times);
  return m;
}

Measurement pool_measurements(const std::vector<Measurement>& rounds) {
  std::vector<double> all;
  std::int64_t calls = 1;
  for (const Measurement& r : rounds) {
    all.insert(all.end(), r.per_call_ms.begin(), r.per_call_ms.end());
    calls = std::max(calls, r.calls_per_sample);
  }
  if (all.empty()) fail("pool_measurements", "rounds must hold at least one sample");
  return summarize_samples(std::move(all), calls);
}

}  // namespace ampkit::tools::bench
