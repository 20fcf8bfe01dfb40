// Timing of the `ampkit bench` subcommands (tools layer, bench/): a stopwatch, warm-up, samples
// that loop short calls, medians, and pooling of alternated rounds. tests/tools tests it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <utility>
#include <vector>

namespace ampkit::tools::bench {

/// Which clock a Timer reads: wall time (steady clock); the CPU time of the calling thread, which
/// leaves out the time the thread waits for a core (1-thread runs on a shared, loaded machine;
/// it would undercount a call that works in other threads); or the CPU time of the whole process
/// (several threads: a rate per CPU-second, so per core; with OMP_WAIT_POLICY=passive, so that
/// threads waiting at barriers sleep instead of spinning on the clock).
enum class BenchClock { wall, thread_cpu, process_cpu };

/// Milliseconds on `clock` since an arbitrary origin.
inline double clock_ms(BenchClock clock) {
  if (clock != BenchClock::wall) {
    timespec t{};
    clock_gettime(clock == BenchClock::thread_cpu ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// A stopwatch (steady clock by default), started at construction.
class Timer {
 public:
  explicit Timer(BenchClock clock = BenchClock::wall) : clock_(clock), start_(clock_ms(clock)) {}
  void restart() { start_ = clock_ms(clock_); }
  /// Milliseconds since construction or the last restart().
  double elapsed_ms() const { return clock_ms(clock_) - start_; }

 private:
  BenchClock clock_;
  double start_;
};

/// How long measure() keeps repeating.
struct MeasureOptions {
  int warmup_calls = 2;         // untimed calls first (page faults, caches, thread start-up)
  int min_samples = 5;          // at least this many timed samples...
  double min_total_ms = 100.0;  // ...and at least this much timed time in total,
  int max_samples = 1000;       // but never more samples than this.
  double min_sample_ms = 0.2;   // a sample loops a short call until it lasts about this long
  BenchClock clock = BenchClock::wall;
};

/// Per-call time of a measured function.
struct Measurement {
  double median_ms = 0.0;  // median over the samples of (sample time / calls per sample)
  double min_ms = 0.0;     // fastest sample, per call
  int samples = 0;
  std::int64_t calls_per_sample = 1;
  std::vector<double> per_call_ms;  // every sample's per-call time, sorted (for pooling rounds)
};

/// Median and min of per-call times (ms). Throws Error if empty.
Measurement summarize_samples(std::vector<double> times, std::int64_t calls_per_sample);
/// The samples of several measurements of one function pooled into one (e.g. rounds measured
/// alternately with a peer). Throws Error if there are none.
Measurement pool_measurements(const std::vector<Measurement>& rounds);

/// Warms up, then times fn() repeatedly (short calls looped `calls_per_sample` times per sample)
/// until the limits of `options` are met; returns the median and min per call.
template <typename Fn>
Measurement measure(Fn&& fn, const MeasureOptions& options = {}) {
  for (int i = 0; i < options.warmup_calls; ++i) fn();
  // Calibrate: how many calls make one sample of at least min_sample_ms.
  std::int64_t calls = 1;
  for (;;) {
    Timer t(options.clock);
    for (std::int64_t i = 0; i < calls; ++i) fn();
    const double ms = t.elapsed_ms();
    if (ms >= options.min_sample_ms || calls >= (std::int64_t{1} << 24)) break;
    calls = ms <= 0.0
                ? calls * 16
                : std::max(calls + 1,
                           static_cast<std::int64_t>(static_cast<double>(calls) * options.min_sample_ms * 1.2 / ms));
  }
  std::vector<double> times;
  double total = 0.0;
  while (static_cast<int>(times.size()) < options.max_samples) {
    Timer t(options.clock);
    for (std::int64_t i = 0; i < calls; ++i) fn();
    const double ms = t.elapsed_ms();
    times.push_back(ms / static_cast<double>(calls));
    total += ms;
    const bool enough = static_cast<int>(times.size()) >= options.min_samples;
    if (enough && total >= options.min_total_ms) break;
  }
  return summarize_samples(std::move(times), calls);
}

}  // namespace ampkit::tools::bench
