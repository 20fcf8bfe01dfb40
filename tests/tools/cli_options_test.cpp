// Tests of the `ampkit` command line's parser and top level (tools/ampkit/cli/): typed options,
// every kind of usage error and its message, --help, the OMP_NUM_THREADS check, exit codes.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "tools/ampkit/cli/dispatch.hpp"
#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools::cli {
namespace {

// A parser with one option of each kind, bound to the fields.
struct Fixture {
  bool json = false;
  std::optional<std::string> op, shapes;
  std::optional<std::int64_t> reps;
  std::optional<double> scale;
  std::vector<int> threads;
  OptionParser parser{"bench test", "a parser under test"};
  Fixture() {
    parser.flag("--json", &json, "json lines")
        .choice("--op", {"layer_norm", "rms_norm", "all"}, &op, "which op")
        .text("--shapes", "LIST", &shapes, "shapes")
        .integer("--reps", "N", 1, 100, &reps, "samples")
        .positive_number("--scale", "S", &scale, "a scale")
        .integer_list("--threads", "1,2", 1, kMaxThreads, &threads, "thread counts");
  }
};

// The UsageError message of parsing `args`, or "no error".
std::string usage_message(const Args& args) {
  Fixture f;
  try {
    f.parser.parse(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CliOptions, ParsesEveryKindAndBothSpellings) {
  Fixture f;
  ASSERT_TRUE(f.parser.parse(
      {"--json", "--op=rms_norm", "--shapes", "1x2", "--reps", "3", "--scale=2.5e-5", "--threads", "2,1"}));
  EXPECT_TRUE(f.json);
  EXPECT_EQ(f.op, "rms_norm");
  EXPECT_EQ(f.shapes, "1x2");
  EXPECT_EQ(f.reps, 3);
  EXPECT_EQ(f.scale, 2.5e-5);
  EXPECT_EQ(f.threads, (std::vector<int>{2, 1}));
}

TEST(CliOptions, UnsetOptionsStayUnset) {
  Fixture f;
  ASSERT_TRUE(f.parser.parse({}));
  EXPECT_FALSE(f.json);
  EXPECT_FALSE(f.op.has_value());
  EXPECT_FALSE(f.reps.has_value());
  EXPECT_TRUE(f.threads.empty());
}

TEST(CliOptions, EveryUsageErrorSaysWhatWasExpectedAndGiven) {
  EXPECT_EQ(usage_message({"--bogus"}), "unknown option '--bogus' (ampkit bench test --help lists the options)");
  EXPECT_EQ(usage_message({"--bogus=1"}), "unknown option '--bogus' (ampkit bench test --help lists the options)");
  EXPECT_EQ(usage_message({"stray"}), "unexpected argument 'stray' (options start with --)");
  EXPECT_EQ(usage_message({"--reps"}), "option --reps expects a value (N), but got none");
  EXPECT_EQ(usage_message({"--reps="}), "option --reps expects a value (N), but got an empty string");
  EXPECT_EQ(usage_message({"--json=1"}), "option --json takes no value, but got '1'");
  EXPECT_EQ(usage_message({"--json", "--json"}), "option --json given twice");
  EXPECT_EQ(usage_message({"--reps", "0"}), "--reps expects an integer in [1, 100], but got 0");
  EXPECT_EQ(usage_message({"--reps", "4x"}), "--reps expects an integer in [1, 100], but got '4x'");
  EXPECT_EQ(usage_message({"--reps", "99999999999999999999"}),
            "--reps expects an integer in [1, 100], but got '99999999999999999999'");
  EXPECT_EQ(usage_message({"--op", "RMS"}), "--op expects one of layer_norm|rms_norm|all, but got 'RMS'");
  EXPECT_EQ(usage_message({"--scale", "-1"}), "--scale expects a positive finite number, but got '-1'");
  EXPECT_EQ(usage_message({"--scale", "inf"}), "--scale expects a positive finite number, but got 'inf'");
  EXPECT_EQ(usage_message({"--threads", "0"}), "--threads expects an integer in [1, 1024], but got 0");
  EXPECT_EQ(usage_message({"--threads", "100000"}), "--threads expects an integer in [1, 1024], but got 100000");
  EXPECT_EQ(usage_message({"--threads", ","}), "--threads expects a list like 1,2, but got ','");
}

TEST(CliOptions, UnknownOptionSuggestsTheNearestName) {
  EXPECT_EQ(usage_message({"--rpes", "3"}),
            "unknown option '--rpes' (did you mean --reps? ampkit bench test --help lists the options)");
  EXPECT_EQ(usage_message({"--shape=4x4"}),
            "unknown option '--shape' (did you mean --shapes? ampkit bench test --help lists the options)");
  const std::vector<std::string> names = {"--steps", "--seed", "--checkpoint", "--checkpoint-every", "--lr"};
  EXPECT_EQ(nearest_option("--stpes", names), "--steps");  // two edits (a swap)
  EXPECT_EQ(nearest_option("--chekpoint", names), "--checkpoint");
  EXPECT_EQ(nearest_option("--checkpoint-ever", names), "--checkpoint-every");
  EXPECT_EQ(nearest_option("--checkpoint-", names), "--checkpoint");  // nearer than the prefix rule
  EXPECT_EQ(nearest_option("--stee", names), "");                     // --steps and --seed: a tie
  EXPECT_EQ(nearest_option("--checkp", names), "");                   // begins two names
  EXPECT_EQ(nearest_option("--save", names), "");                     // nothing near
  EXPECT_EQ(nearest_option("--lr", {}), "");
}

TEST(CliOptions, HelpStopsParsingAndListsEveryOption) {
  Fixture f;
  testing::internal::CaptureStdout();
  EXPECT_FALSE(f.parser.parse({"--reps", "0", "-h"}));  // --help wins over a bad value
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, f.parser.help());
  for (const char* name : {"usage: ampkit bench test [options]", "--json", "--op layer_norm|rms_norm|all",
                           "--shapes LIST", "--reps N", "--scale S", "--threads 1,2", "-h, --help"})
    EXPECT_NE(out.find(name), std::string::npos) << name;
}

TEST(CliOptions, SplitListAndParseInt) {
  EXPECT_EQ(split_list(" a, b,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(split_list("64x128", 'x'), (std::vector<std::string>{"64", "128"}));
  EXPECT_EQ(parse_int("42", "--reps", 1, 100), 42);
  EXPECT_THROW(parse_int("", "--reps", 1, 100), UsageError);
  EXPECT_THROW(parse_int("+1", "--reps", 1, 100), UsageError);
}

TEST(CliDispatch, ThreadEnvironmentIsBounded) {
  EXPECT_NO_THROW(check_thread_environment(nullptr));
  EXPECT_NO_THROW(check_thread_environment("2"));
  EXPECT_NO_THROW(check_thread_environment("1024"));
  EXPECT_NO_THROW(check_thread_environment("4,2"));  // nested levels: the first is ampkit's
  EXPECT_THROW(check_thread_environment("100000"), UsageError);
  EXPECT_THROW(check_thread_environment("1025,1"), UsageError);
  EXPECT_THROW(check_thread_environment("99999999999999999999999"), UsageError);
  // Values OpenMP cannot read are its to report (it warns and ignores them).
  EXPECT_NO_THROW(check_thread_environment("0"));
  EXPECT_NO_THROW(check_thread_environment("many"));
}

TEST(CliDispatch, ErrorKindsMapToExitCodes) {
  EXPECT_EQ(exit_code(ErrorKind::invalid_argument), 1);
  EXPECT_EQ(exit_code(ErrorKind::unsupported), 1);
  EXPECT_EQ(exit_code(ErrorKind::out_of_memory), 1);
  EXPECT_EQ(exit_code(ErrorKind::internal), 70);
}

}  // namespace
}  // namespace ampkit::tools::cli
