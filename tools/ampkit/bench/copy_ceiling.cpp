// The copy ceiling at a case's footprint (tools layer, bench/): see copy_ceiling.hpp.
#include "tools/ampkit/bench/copy_ceiling.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cpu.hpp"

namespace ampkit::tools::bench {
namespace {

constexpr std::int64_t kBlock = std::int64_t{64} << 10;  // memcpy of 64 KiB: ordinary stores
constexpr std::int64_t kLine = 64;

// GB/s of `pass` over `footprint` bytes, timed like the cases (a few samples of a huge one).
template <class Pass>
double rate_of(Pass&& pass, std::int64_t footprint, MeasureOptions o) {
  if (footprint >= (std::int64_t{1} << 30)) o.min_total_ms = 0.0;
  const Measurement m = measure(pass, o);
  return static_cast<double>(footprint) / (m.median_ms * 1e-3) / 1e9;
}

// memo[key], measured once.
template <class Measure>
double memoized(std::map<std::pair<std::int64_t, int>, double>& memo, std::pair<std::int64_t, int> key,
                Measure&& measure_now) {
  const auto found = memo.find(key);
  if (found != memo.end()) return found->second;
  const double g = measure_now();
  memo.emplace(key, g);
  return g;
}

}  // namespace

std::int64_t CopyCeiling::dram_footprint() {
  static const std::int64_t footprint = std::max(std::int64_t{512} << 20, 8 * cpu_features().caches.l3);
  return footprint;
}

std::int64_t CopyCeiling::in_cache_footprint(int threads) {
  return std::max<std::int64_t>(1, threads) * (cpu_features().caches.l2 / 2);
}

std::int64_t CopyCeiling::measured_footprint(std::int64_t footprint_bytes) {
  // Whole cache lines on each side, at least one.
  const std::int64_t half =
      std::max(kLine, (std::min(footprint_bytes, dram_footprint()) / 2 + kLine - 1) / kLine * kLine);
  return 2 * half;
}

CopyCeiling::CopyCeiling(int max_threads, MeasureOptions options)
    : options_(options),
      src_(static_cast<std::size_t>(dram_footprint() / 2), max_threads),
      dst_(static_cast<std::size_t>(dram_footprint() / 2), max_threads) {}

double CopyCeiling::measure_gbps(std::int64_t footprint_bytes, int threads) {
  if (footprint_bytes <= 0) fail("CopyCeiling::gbps", "footprint_bytes must be > 0, but got ", footprint_bytes);
  if (threads < 1) fail("CopyCeiling::gbps", "threads must be >= 1, but got ", threads);
  const std::int64_t footprint = measured_footprint(footprint_bytes), half = footprint / 2;
  auto* src = src_.as<unsigned char>();
  auto* dst = dst_.as<unsigned char>();
  const std::int64_t blocks = (half + kBlock - 1) / kBlock;
  const int team = static_cast<int>(std::min<std::int64_t>(threads, blocks));
  auto block = [&](std::int64_t i) {
    const std::int64_t at = i * kBlock;
    std::memcpy(dst + at, src + at, static_cast<std::size_t>(std::min(kBlock, half - at)));
  };
  auto copy = [&] {
    if (team <= 1) {
      for (std::int64_t i = 0; i < blocks; ++i) block(i);
      return;
    }
#pragma omp parallel for num_threads(team) schedule(static)
    for (std::int64_t i = 0; i < blocks; ++i) block(i);
  };
  return rate_of(copy, footprint, options_);
}

double CopyCeiling::gbps(std::int64_t footprint_bytes, int threads) {
  return memoized(memo_, {measured_footprint(footprint_bytes), threads},
                  [&] { return measure_gbps(footprint_bytes, threads); });
}

double CopyCeiling::remeasure(std::int64_t footprint_bytes, int threads) {
  return measure_gbps(footprint_bytes, threads);
}

std::int64_t CopyCeiling::measured_read_footprint(std::int64_t footprint_bytes) {
  return std::max(kLine, (std::min(footprint_bytes, dram_footprint() / 2) + kLine - 1) / kLine * kLine);
}

double CopyCeiling::measure_read_gbps(std::int64_t footprint_bytes, int threads) {
  if (footprint_bytes <= 0) fail("CopyCeiling::read_gbps", "footprint_bytes must be > 0, but got ", footprint_bytes);
  if (threads < 1) fail("CopyCeiling::read_gbps", "threads must be >= 1, but got ", threads);
  const std::int64_t footprint = measured_read_footprint(footprint_bytes);
  const auto* src = src_.as<std::uint64_t>();
  constexpr std::int64_t kWords = kBlock / 8;
  const std::int64_t words = footprint / 8, blocks = (words + kWords - 1) / kWords;
  const int team = static_cast<int>(std::min<std::int64_t>(threads, blocks));
  // A cache line a step into eight independent sums (vector adds, several loads in flight); the
  // total goes to a volatile so the reads cannot be dropped. (Whole lines: footprint is.)
  auto block = [&](std::int64_t i) {
    const std::int64_t begin = i * kWords, end = std::min(words, begin + kWords);
    std::uint64_t sums[8] = {};
    for (std::int64_t w = begin; w < end; w += 8)
      for (int l = 0; l < 8; ++l) sums[l] += src[w + l];
    std::uint64_t sum = 0;
    for (std::uint64_t x : sums) sum += x;
    return sum;
  };
  volatile std::uint64_t sink = 0;
  auto read = [&] {
    std::uint64_t total = 0;
    if (team <= 1) {
      for (std::int64_t i = 0; i < blocks; ++i) total += block(i);
    } else {
#pragma omp parallel for num_threads(team) schedule(static) reduction(+ : total)
      for (std::int64_t i = 0; i < blocks; ++i) total += block(i);
    }
    sink = sink + total;
  };
  return rate_of(read, footprint, options_);
}

double CopyCeiling::read_gbps(std::int64_t footprint_bytes, int threads) {
  return memoized(read_memo_, {measured_read_footprint(footprint_bytes), threads},
                  [&] { return measure_read_gbps(footprint_bytes, threads); });
}

}  // namespace ampkit::tools::bench
