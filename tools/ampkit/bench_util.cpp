// Shared machinery of the `ampkit bench` subcommands (tools layer): sample statistics, JSON
// lines, aligned pre-touched buffers, copy bandwidth, option parsing. See bench_util.hpp.
#include "tools/ampkit/bench_util.hpp"

#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "ampkit/core/error.hpp"

namespace ampkit::tools::bench {

// ---------------------------------------------------------------------------------------------
// Timing

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

// ---------------------------------------------------------------------------------------------
// JSON lines

std::string json_quote(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;  // UTF-8 bytes pass through unchanged
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);  // shortest round-trip form
  return std::string(buf, result.ptr);
}

void JsonLine::key(std::string_view k) {
  if (!body_.empty()) body_ += ',';
  body_ += json_quote(k);
  body_ += ':';
}

JsonLine& JsonLine::add(std::string_view k, std::string_view value) {
  key(k);
  body_ += json_quote(value);
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, double value) {
  key(k);
  body_ += json_number(value);
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, std::int64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, bool value) {
  key(k);
  body_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::add_null(std::string_view k) {
  key(k);
  body_ += "null";
  return *this;
}

JsonLine& JsonLine::add(std::string_view k, const std::vector<std::int64_t>& values) {
  key(k);
  body_ += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) body_ += ',';
    body_ += std::to_string(values[i]);
  }
  body_ += ']';
  return *this;
}

// ---------------------------------------------------------------------------------------------
// Memory

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kPage = 4096;

}  // namespace

AlignedBuffer::AlignedBuffer(std::size_t bytes, int threads) {
  if (threads < 1) fail("AlignedBuffer", "threads must be >= 1, but got ", threads);
  // Large buffers are 2 MiB aligned and advised to use transparent huge pages (the machine's
  // setting is "madvise"): fewer page faults to pre-touch and fewer TLB misses, as a training
  // runtime's memory pool would have. The alignment the kernels see is 64 bytes either way.
  const bool huge = bytes >= kHugePage;
  const std::size_t align = huge ? kHugePage : 64;
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
  data_ = std::aligned_alloc(align, rounded);
  if (data_ == nullptr)
    fail("AlignedBuffer", "cannot allocate ", bytes, " bytes (", bytes >> 20, " MiB)");
  bytes_ = bytes;
  if (huge) madvise(data_, rounded, MADV_HUGEPAGE);  // advice only; failure is harmless
  // First touch: pages in a static schedule, as the kernels split their rows.
  auto* p = static_cast<unsigned char*>(data_);
  const auto pages = static_cast<std::int64_t>((rounded + kPage - 1) / kPage);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < pages; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * kPage;
    std::memset(p + at, 0, std::min(kPage, rounded - at));
  }
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

std::size_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string name;
  std::size_t kib = 0;
  std::string unit;
  while (in >> name >> kib >> unit)
    if (name == "MemAvailable:") return kib * 1024;
  return 0;
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
      std::memcpy(dst + static_cast<std::size_t>(i) * kBlock,
                  src + static_cast<std::size_t>(i) * kBlock, kBlock);
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

// ---------------------------------------------------------------------------------------------
// Options

namespace {

constexpr OptionSpec kCommonSpecs[] = {
    {"--threads", true}, {"--json", false}, {"--reps", true}, {"--quick", false},
    {"--help", false},
};

const OptionSpec* find_spec(std::string_view name, std::initializer_list<OptionSpec> own) {
  for (const OptionSpec& s : kCommonSpecs)
    if (s.name == name) return &s;
  for (const OptionSpec& s : own)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace

Options::Options(const Args& args, const char* command, std::initializer_list<OptionSpec> own) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string value;
    bool has_inline_value = false;
    if (name == "-h") name = "--help";
    if (const std::size_t eq = name.find('='); name.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
      has_inline_value = true;
    }
    const OptionSpec* spec = find_spec(name, own);
    if (spec == nullptr) {
      std::string known;
      for (const OptionSpec& s : kCommonSpecs) known.append(" ").append(s.name);
      for (const OptionSpec& s : own) known.append(" ").append(s.name);
      fail(command, "unknown option '", args[i], "' (expected one of:", known, ")");
    }
    if (spec->takes_value && !has_inline_value) {
      if (i + 1 >= args.size()) fail(command, "option ", name, " expects a value, but got none");
      value = args[++i];
    } else if (!spec->takes_value && has_inline_value) {
      fail(command, "option ", name, " takes no value, but got '", value, "'");
    }
    if (spec->takes_value && value.empty())
      fail(command, "option ", name, " expects a value, but got an empty string");
    for (const auto& g : given_)
      if (g.first == name) fail(command, "option ", name, " given twice");
    given_.emplace_back(name, value);
  }
  common_.json = has("--json");
  common_.quick = has("--quick");
  common_.help = has("--help");
  if (has("--reps"))
    common_.reps = static_cast<int>(parse_int(value_or("--reps", ""), command, "--reps", 1, 100000));
  if (has("--threads")) common_.threads = parse_thread_list(value_or("--threads", ""), command);
}

bool Options::has(std::string_view name) const {
  for (const auto& g : given_)
    if (g.first == name) return true;
  return false;
}

std::string Options::value_or(std::string_view name, std::string_view fallback) const {
  for (const auto& g : given_)
    if (g.first == name) return g.second;
  return std::string(fallback);
}

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) items.emplace_back(item);
    start = end + 1;
  }
  return items;
}

std::int64_t parse_int(std::string_view text, const char* command, std::string_view option,
                       std::int64_t lo, std::int64_t hi) {
  std::int64_t value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || result.ec != std::errc() || result.ptr != text.data() + text.size())
    fail(command, option, " expects an integer in [", lo, ", ", hi, "], but got '", text, "'");
  if (value < lo || value > hi)
    fail(command, option, " expects an integer in [", lo, ", ", hi, "], but got ", value);
  return value;
}

std::vector<int> parse_thread_list(std::string_view text, const char* command) {
  std::vector<int> threads;
  for (const std::string& item : split_list(text))
    threads.push_back(static_cast<int>(parse_int(item, command, "--threads", 1, 1024)));
  if (threads.empty())
    fail(command, "--threads expects a list like 1,2, but got '", text, "'");
  return threads;
}

std::string machine_description() {
  std::string model = "unknown cpu";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      if (const std::size_t colon = line.find(':'); colon != std::string::npos)
        model = line.substr(std::min(colon + 2, line.size()));
      break;
    }
  }
  std::size_t total_kib = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string name, unit;
  std::size_t kib = 0;
  while (meminfo >> name >> kib >> unit)
    if (name == "MemTotal:") total_kib = kib;
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << model << ", " << sysconf(_SC_NPROCESSORS_ONLN) << " cpus, "
      << static_cast<double>(total_kib) / (1024.0 * 1024.0) << " GiB";
  return out.str();
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &local);
  return buf;
}

}  // namespace ampkit::tools::bench
