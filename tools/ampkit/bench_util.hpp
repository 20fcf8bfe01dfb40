// Shared machinery of the `ampkit bench` subcommands (tools layer): timing with warm-up and
// medians, a JSON-lines writer, 64-byte-aligned pre-touched buffers, the machine's copy bandwidth
// measured in the same run, and the options every bench subcommand accepts.
// Called by bench_norm.cpp (and the GEMM bench); tests/tools/bench_util_test.cpp tests it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/ampkit/commands.hpp"

namespace ampkit::tools::bench {

// ---------------------------------------------------------------------------------------------
// Timing

/// A steady-clock stopwatch, started at construction.
class Timer {
 public:
  Timer() : start_(std::chrono::steady_clock::now()) {}
  void restart() { start_ = std::chrono::steady_clock::now(); }
  /// Milliseconds since construction or the last restart().
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

/// How long measure() keeps repeating.
struct MeasureOptions {
  int warmup_calls = 2;          // untimed calls first (page faults, caches, thread start-up)
  int min_samples = 5;           // at least this many timed samples...
  double min_total_ms = 100.0;   // ...and at least this much timed time in total,
  int max_samples = 1000;        // but never more samples than this.
  double min_sample_ms = 0.2;    // a sample loops a short call until it lasts about this long
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
    Timer t;
    for (std::int64_t i = 0; i < calls; ++i) fn();
    const double ms = t.elapsed_ms();
    if (ms >= options.min_sample_ms || calls >= (std::int64_t{1} << 24)) break;
    calls = ms <= 0.0 ? calls * 16
                      : std::max(calls + 1, static_cast<std::int64_t>(
                                                static_cast<double>(calls) *
                                                options.min_sample_ms * 1.2 / ms));
  }
  std::vector<double> times;
  double total = 0.0;
  while (static_cast<int>(times.size()) < options.max_samples) {
    Timer t;
    for (std::int64_t i = 0; i < calls; ++i) fn();
    const double ms = t.elapsed_ms();
    times.push_back(ms / static_cast<double>(calls));
    total += ms;
    const bool enough = static_cast<int>(times.size()) >= options.min_samples;
    if (enough && total >= options.min_total_ms) break;
  }
  return summarize_samples(std::move(times), calls);
}

// ---------------------------------------------------------------------------------------------
// JSON lines

/// One JSON object written as one line; keys appear in the order they were added.
class JsonLine {
 public:
  JsonLine& add(std::string_view key, std::string_view value);
  JsonLine& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
  JsonLine& add(std::string_view key, double value);  // NaN and +-Inf are written as null
  JsonLine& add(std::string_view key, std::int64_t value);
  JsonLine& add(std::string_view key, int value) { return add(key, std::int64_t{value}); }
  JsonLine& add(std::string_view key, bool value);
  JsonLine& add_null(std::string_view key);
  JsonLine& add(std::string_view key, const std::vector<std::int64_t>& values);  // JSON array
  /// The object, e.g. {"op":"layer_norm","ms":0.0123}, without a newline.
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view k);
  std::string body_;
};

/// `text` as a JSON string literal with quotes ("a\"b\n" -> "\"a\\\"b\\n\"").
std::string json_quote(std::string_view text);
/// Shortest decimal text that reads back as exactly `value` ("null" when not finite).
std::string json_number(double value);

// ---------------------------------------------------------------------------------------------
// Memory

/// A 64-byte-aligned byte buffer allocated once and pre-touched: zero-filled in an OpenMP
/// parallel loop with a static schedule over `threads` threads, so its pages exist (and are
/// placed) before anything is timed. Move-only.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  /// Throws Error when the allocation fails.
  AlignedBuffer(std::size_t bytes, int threads);
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer();

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* as() { return static_cast<T*>(data_); }
  std::size_t size() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// MemAvailable from /proc/meminfo in bytes (0 when it cannot be read).
std::size_t available_memory_bytes();

/// STREAM-style copy bandwidth in GB/s (1e9 bytes/s) with `threads` OpenMP threads: two float
/// arrays of 256 MiB each (8x the 32 MiB L3), b[i] = a[i] with ordinary stores, counted as read
/// + write bytes (8 per element; the hidden write-allocate read is not counted), the median of
/// `reps` copies after a warm-up. The same byte convention as every `ampkit bench` GB/s figure.
double copy_bandwidth_gbps(int threads, int reps = 9);

// ---------------------------------------------------------------------------------------------
// Options

/// An option a bench subcommand accepts besides the common ones.
struct OptionSpec {
  std::string_view name;   // "--op"
  bool takes_value;        // "--op layer_norm" / "--op=layer_norm" vs a flag
};

/// The options of every bench subcommand.
struct CommonOptions {
  std::vector<int> threads;  // --threads 1,2 (empty: the subcommand's default)
  bool json = false;         // --json: one JSON object per line instead of a table
  int reps = 0;              // --reps N: minimum timed samples per case (0: the default)
  bool quick = false;        // --quick: a small subset for a smoke run
  bool help = false;         // --help / -h
};

/// Parsed command line of a bench subcommand: the common options plus its own.
class Options {
 public:
  /// Parses `args` for `command` (e.g. "bench norm"): the common options (--threads, --json,
  /// --reps, --quick, --help) and `own`. Throws Error on an unknown option, a missing value, a
  /// repeated option or a bad common value.
  Options(const Args& args, const char* command, std::initializer_list<OptionSpec> own);

  const CommonOptions& common() const { return common_; }
  bool has(std::string_view name) const;
  /// The value of an option that takes one, or `fallback` when it was not given.
  std::string value_or(std::string_view name, std::string_view fallback) const;

 private:
  CommonOptions common_;
  std::vector<std::pair<std::string, std::string>> given_;
};

/// "a,b,,c" -> {"a","b","c"}; surrounding spaces trimmed, empty items dropped.
std::vector<std::string> split_list(std::string_view text, char separator = ',');
/// Parses a whole decimal integer in [lo, hi]; throws Error "<command>: <option> expects ...".
std::int64_t parse_int(std::string_view text, const char* command, std::string_view option,
                       std::int64_t lo, std::int64_t hi);
/// Parses "1,2" into thread counts in [1, 1024]; throws Error naming the command and option.
std::vector<int> parse_thread_list(std::string_view text, const char* command);

/// "AMD EPYC, 2 cpus, 23.4 GiB" from /proc/cpuinfo and /proc/meminfo (best effort).
std::string machine_description();
/// Today's date, "YYYY-MM-DD" (local time).
std::string today();

}  // namespace ampkit::tools::bench
