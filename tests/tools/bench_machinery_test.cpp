// Tests of the `ampkit bench` machinery (tools/ampkit/bench/): JSON escaping and numbers, sample
// statistics, measure()'s repetition rules and clocks, aligned buffers, the memory check, norm
// shape limits, the copy and read ceilings' footprints and refusals.
#include "tools/ampkit/bench/copy_ceiling.hpp"
#include "tools/ampkit/bench/norm_case.hpp"
#include "tools/ampkit/bench/peers/child_process.hpp"
#include "tools/ampkit/bench/timing.hpp"
#include "tools/ampkit/common/json_line.hpp"
#include "tools/ampkit/common/memory.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "ampkit/core/error.hpp"
#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools::bench {
namespace {

TEST(BenchUtil, JsonQuoteEscapes) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_quote("x\ny\tz\r"), "\"x\\ny\\tz\\r\"");
  EXPECT_EQ(json_quote(std::string("\x01", 1)), "\"\\u0001\"");
  EXPECT_EQ(json_quote("\xc2\xb5s"), "\"\xc2\xb5s\"");  // UTF-8 passes through
}

TEST(BenchUtil, JsonNumbersRoundTrip) {
  for (double v : {0.1, 1.0 / 3.0, 123456.789e-9, 1e300, -2.5, 0.0}) {
    const std::string text = json_number(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
  }
  EXPECT_EQ(json_number(std::numeric_limits<double>::quiet_NaN()), "null");
  EXPECT_EQ(json_number(std::numeric_limits<double>::infinity()), "null");
}

TEST(BenchUtil, JsonLineKeepsKeyOrder) {
  JsonLine line;
  line.add("op", "layer_norm").add("ms", 0.5).add("threads", 2).add("ok", true).add_null("peer_ms");
  line.add("shape", std::vector<std::int64_t>{64, 128});
  EXPECT_EQ(line.str(),
            "{\"op\":\"layer_norm\",\"ms\":0.5,\"threads\":2,\"ok\":true,\"peer_ms\":null,"
            "\"shape\":[64,128]}");
}

TEST(BenchUtil, PeerOutputFieldsAreReadAsJson) {
  const std::string out =
      "torch 2.1 loaded\n"
      "{\"peer\":\"pytorch\",\"version\":\"2.1 \\\"cpu\\\"\",\"step_ms\": 12.5,\"n\":\"7\"}\n"
      "{\"step_ms\":99}";
  EXPECT_EQ(json_number_field(out, "step_ms"), 12.5);           // the first line holding it
  EXPECT_EQ(json_string_field(out, "version"), "2.1 \"cpu\"");  // unescaped
  EXPECT_TRUE(std::isnan(json_number_field(out, "n")));         // a string, not a number
  EXPECT_EQ(json_string_field(out, "step_ms"), "");             // a number, not a string
  EXPECT_TRUE(std::isnan(json_number_field(out, "missing")));
  EXPECT_EQ(json_string_field("not json \"version\":\"x\"", "version"), "");
}

TEST(BenchUtil, SummarizeSamplesGivesMedianAndMin) {
  std::vector<double> odd = {5.0, 1.0, 3.0};
  Measurement m = summarize_samples(odd, 4);
  EXPECT_EQ(m.median_ms, 3.0);
  EXPECT_EQ(m.min_ms, 1.0);
  EXPECT_EQ(m.samples, 3);
  EXPECT_EQ(m.calls_per_sample, 4);
  std::vector<double> even = {4.0, 1.0, 2.0, 8.0};
  EXPECT_EQ(summarize_samples(even, 1).median_ms, 3.0);
  EXPECT_EQ(m.per_call_ms, (std::vector<double>{1.0, 3.0, 5.0}));
  EXPECT_THROW(summarize_samples({}, 1), Error);
  const Measurement pooled = pool_measurements({m, summarize_samples(even, 2)});
  EXPECT_EQ(pooled.samples, 7);
  EXPECT_EQ(pooled.median_ms, 3.0);  // of {1, 1, 2, 3, 4, 5, 8}
  EXPECT_EQ(pooled.min_ms, 1.0);
  EXPECT_THROW(pool_measurements({}), Error);
}

TEST(BenchUtil, MeasureWarmsUpAndRespectsSampleLimits) {
  std::int64_t calls = 0;
  MeasureOptions options;
  options.warmup_calls = 3;
  options.min_samples = 7;
  options.max_samples = 7;
  options.min_total_ms = 0.0;
  options.min_sample_ms = 0.0;  // one call per sample
  const Measurement m = measure([&] { ++calls; }, options);
  EXPECT_EQ(m.samples, 7);
  EXPECT_EQ(m.calls_per_sample, 1);
  EXPECT_EQ(calls, 3 + 1 + 7);  // warm-up, one calibration call, samples
  EXPECT_LE(m.min_ms, m.median_ms);
}

// The read ceiling (bench gemm's xread): whole cache lines, the DRAM class past half the copy's
// DRAM footprint, a finite positive rate memoized per measured footprint, refusals that name it.
TEST(BenchUtil, ReadCeilingMeasuresWholeLinesAndRefusesBadArguments) {
  EXPECT_EQ(CopyCeiling::measured_read_footprint(1), 64);
  EXPECT_EQ(CopyCeiling::measured_read_footprint(65), 128);
  EXPECT_EQ(CopyCeiling::measured_read_footprint(std::int64_t{1} << 40), CopyCeiling::dram_footprint() / 2);
  MeasureOptions options;
  options.min_samples = 3;
  options.min_total_ms = 1.0;
  CopyCeiling ceiling(1, options);
  const double gbps = ceiling.read_gbps(std::int64_t{1} << 20, 1);
  EXPECT_TRUE(std::isfinite(gbps));
  EXPECT_GT(gbps, 0.0);
  EXPECT_EQ(ceiling.read_gbps((std::int64_t{1} << 20) - 10, 1), gbps);  // the same measured footprint
  try {
    ceiling.read_gbps(0, 1);
    ADD_FAILURE() << "a zero footprint was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CopyCeiling::read_gbps"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("footprint_bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ceiling.read_gbps(64, 0), Error);
}

TEST(BenchUtil, MeasureLoopsShortCalls) {
  volatile double sink = 0.0;
  MeasureOptions options;
  options.min_samples = 3;
  options.min_total_ms = 1.0;
  options.min_sample_ms = 0.1;
  const Measurement m = measure([&] { sink = sink + 1.0; }, options);
  EXPECT_GT(m.calls_per_sample, 1);
  EXPECT_GE(m.samples, 3);
  EXPECT_GT(m.median_ms, 0.0);
}

// The thread's CPU time advances with work done in the thread and not while it sleeps.
TEST(BenchUtil, ThreadCpuClockCountsWorkNotSleep) {
  Timer cpu(BenchClock::thread_cpu), wall;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_GE(wall.elapsed_ms(), 30.0);
  EXPECT_LT(cpu.elapsed_ms(), 20.0);
  volatile double sink = 0.0;
  cpu.restart();
  while (cpu.elapsed_ms() < 5.0) sink = sink + 1.0;  // ends only if the clock advances with work
  MeasureOptions options;
  options.clock = BenchClock::thread_cpu;
  options.min_samples = 3;
  options.min_total_ms = 1.0;
  const Measurement m = measure([&] { sink = sink + 1.0; }, options);
  EXPECT_GE(m.samples, 3);
  EXPECT_GT(m.median_ms, 0.0);
}

// The process clock adds up the CPU time of every thread: two threads working 10 ms of CPU time
// each advance it by at least 20 ms, however the machine schedules them; sleeping does not.
TEST(BenchUtil, ProcessCpuClockAddsUpTheThreadsWork) {
  Timer process(BenchClock::process_cpu);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_LT(process.elapsed_ms(), 20.0);
  process.restart();
  volatile double sink = 0.0;
#pragma omp parallel num_threads(2)
  {
    Timer own(BenchClock::thread_cpu);
    while (own.elapsed_ms() < 10.0) sink = sink + 1.0;
  }
  EXPECT_GE(process.elapsed_ms(), 19.0);
}

TEST(BenchUtil, AlignedBufferIsAlignedAndZeroed) {
  for (std::size_t bytes : {std::size_t{1}, std::size_t{100}, std::size_t{5} << 20}) {
    AlignedBuffer b(bytes, 2);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 64, 0u);
    EXPECT_EQ(b.size(), bytes);
    EXPECT_EQ(b.as<unsigned char>()[bytes - 1], 0);
    AlignedBuffer moved = std::move(b);
    EXPECT_EQ(b.data(), nullptr);
    EXPECT_EQ(moved.size(), bytes);
  }
  EXPECT_THROW(AlignedBuffer(16, 0), Error);
}

TEST(BenchUtil, FormatBytes) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1.5 * 1024 * 1024), "1.5 MiB");
  EXPECT_EQ(format_bytes(4e12), "3.6 TiB");
}

TEST(BenchUtil, RequireMemoryRefusesWhatCannotFit) {
  if (available_memory_bytes() == 0) GTEST_SKIP() << "available memory unknown here";
  EXPECT_NO_THROW(require_memory("--shapes", "a case", 1024.0));
  try {
    require_memory("--shapes", "the largest case", 1e18);
    FAIL() << "1e18 bytes accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
    EXPECT_NE(std::string(e.what()).find("--shapes: the largest case needs 888.2 PiB of buffers, but "),
              std::string::npos)
        << e.what();
  }
}

TEST(BenchUtil, NormShapesRejectOverflowingElementCounts) {
  const NormShape s = parse_norm_shape("64x128x56x56");
  EXPECT_EQ(s.rows, 64 * 128 * 56);
  EXPECT_EQ(s.n, 56);
  // 2^36 elements are allowed; one more is not; products that wrap int64 are caught.
  EXPECT_EQ(parse_norm_shape("65536x1048576").elements(), kMaxNormElements);
  EXPECT_THROW(parse_norm_shape("65537x1048576"), cli::UsageError);
  EXPECT_THROW(parse_norm_shape("1099511627776x1099511627776x16"), cli::UsageError);
  EXPECT_THROW(parse_norm_shape("4294967296x4294967296x4294967296x4294967296"), cli::UsageError);
  EXPECT_THROW(parse_norm_shape("0x16"), cli::UsageError);
}

}  // namespace
}  // namespace ampkit::tools::bench
