// Tests of the `ampkit bench` machinery (tools/ampkit/bench_util): JSON escaping and numbers,
// sample statistics, measure()'s repetition rules, aligned buffers, option parsing and its errors.
#include "tools/ampkit/bench_util.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"

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

TEST(BenchUtil, SplitListAndParseInt) {
  EXPECT_EQ(split_list(" a, b,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split_list("64x128", 'x'), (std::vector<std::string>{"64", "128"}));
  EXPECT_EQ(parse_int("42", "bench x", "--reps", 1, 100), 42);
  EXPECT_THROW(parse_int("4x", "bench x", "--reps", 1, 100), Error);
  EXPECT_THROW(parse_int("", "bench x", "--reps", 1, 100), Error);
  EXPECT_THROW(parse_int("0", "bench x", "--reps", 1, 100), Error);
  EXPECT_EQ(parse_thread_list("1,2", "bench x"), (std::vector<int>{1, 2}));
}

TEST(BenchUtil, OptionsParseCommonAndOwn) {
  const Options o({"--threads", "2,1", "--json", "--op=rms_norm", "--reps", "3", "--quick"},
                  "bench norm", {{"--op", true}, {"--f16", false}});
  EXPECT_EQ(o.common().threads, (std::vector<int>{2, 1}));
  EXPECT_TRUE(o.common().json);
  EXPECT_TRUE(o.common().quick);
  EXPECT_FALSE(o.common().help);
  EXPECT_EQ(o.common().reps, 3);
  EXPECT_EQ(o.value_or("--op", "all"), "rms_norm");
  EXPECT_FALSE(o.has("--f16"));
  EXPECT_EQ(o.value_or("--f16", "no"), "no");
}

TEST(BenchUtil, OptionsRejectBadInputWithTheCommandName) {
  auto message = [](const Args& args) -> std::string {
    try {
      Options o(args, "bench norm", {{"--op", true}});
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message({"--bogus"}).find("bench norm: unknown option '--bogus'"), std::string::npos);
  EXPECT_NE(message({"--op"}).find("--op expects a value"), std::string::npos);
  EXPECT_NE(message({"--op="}).find("--op expects a value"), std::string::npos);
  EXPECT_NE(message({"--json=1"}).find("--json takes no value"), std::string::npos);
  EXPECT_NE(message({"--threads", "0"}).find("--threads expects an integer in [1, 1024]"),
            std::string::npos);
  EXPECT_NE(message({"--threads", "a"}).find("but got 'a'"), std::string::npos);
  EXPECT_NE(message({"--threads", ","}).find("--threads expects a list"), std::string::npos);
  EXPECT_NE(message({"--reps", "1", "--reps", "2"}).find("given twice"), std::string::npos);
}

}  // namespace
}  // namespace ampkit::tools::bench
