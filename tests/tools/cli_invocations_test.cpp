// The `ampkit` binary run as a user would (tools/ampkit): bad commands, flags and values, each
// subcommand's --help, the up-front size and memory refusals and the thread-environment check —
// the exit code and the first line of stderr of each invocation. Nothing here measures anything:
// every bench invocation is refused before its first timed call.
#include <sys/wait.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <ostream>
#include <regex>
#include <string>

#include "tools/ampkit/common/memory.hpp"

namespace ampkit::tools {
namespace {

struct Invocation {
  const char* env;   // "" or "NAME=value"
  const char* args;  // after "ampkit"
  int exit_code;
  const char* stderr_first_line;  // a regex the whole first line of stderr must match
};

// How GoogleTest prints a row (failure messages, the CTest listing): the command line.
void PrintTo(const Invocation& inv, std::ostream* os) {
  *os << (*inv.env != '\0' ? std::string(inv.env) + " " : std::string()) << "ampkit " << inv.args;
}

// Exit codes (cli/dispatch.hpp): 0 ok, 1 ampkit::Error, 2 usage error, 70 internal.
const Invocation kInvocations[] = {
    // The command table.
    {"", "", 2, "usage: ampkit <command> \\[options\\].*"},
    {"", "--help", 0, ""},
    {"", "--version", 0, ""},
    {"", "frobnicate", 2, "ampkit: error: unknown command 'frobnicate' \\(ampkit --help lists the commands\\)"},
    {"", "bench", 2,
     "ampkit bench: error: expected a subcommand \\(gemm, linear, norm, attention, train\\), but got none .*"},
    {"", "frobnicate --help", 2, "ampkit: error: unknown command 'frobnicate' .*"},
    {"", "bench sgemm", 2,
     "ampkit bench: error: expected a subcommand \\(gemm, linear, norm, attention, train\\), but got 'sgemm' .*"},
    {"", "bench --help", 0, ""},
    {"", "check fp32", 2, "ampkit check: error: expected a subcommand \\(kernels, fp16\\), but got 'fp32' .*"},
    // --help of every subcommand (stdout; nothing on stderr).
    {"", "info --help", 0, ""},
    {"", "bench gemm --help", 0, ""},
    {"", "bench linear -h", 0, ""},
    {"", "bench norm --help", 0, ""},
    {"", "check fp16 --help", 0, ""},
    {"", "check kernels --help", 0, ""},
    {"", "bench train --help", 0, ""},
    {"", "sample --help", 0, ""},
    {"", "check kernels --isa bogus", 2, "ampkit check kernels: error: --isa: expected one of .*, but got 'bogus'"},
    // Bad flags and values: one line, exit 2.
    {"", "info --bogus", 2, "ampkit info: error: unknown option '--bogus' \\(ampkit info --help lists the options\\)"},
    {"", "train --stpes 5", 2,
     "ampkit train: error: unknown option '--stpes' \\(did you mean --steps\\? ampkit train --help lists the "
     "options\\)"},
    {"", "info extra", 2, "ampkit info: error: unexpected argument 'extra' \\(options start with --\\)"},
    {"", "bench gemm --bogus", 2, "ampkit bench gemm: error: unknown option '--bogus' .*"},
    {"", "bench gemm --threads", 2,
     "ampkit bench gemm: error: option --threads expects a value \\(1,2\\|all\\), but got none"},
    {"", "bench gemm --threads some", 2,
     "ampkit bench gemm: error: --threads expects an integer in \\[1, 1024\\], but got 'some'"},
    {"", "bench gemm --threads 0", 2,
     "ampkit bench gemm: error: --threads expects an integer in \\[1, 1024\\], but got 0"},
    {"", "bench gemm --threads 100000", 2,
     "ampkit bench gemm: error: --threads expects an integer in \\[1, 1024\\], but got 100000"},
    {"", "bench gemm --json=yes", 2, "ampkit bench gemm: error: option --json takes no value, but got 'yes'"},
    {"", "bench gemm --op xx", 2, "ampkit bench gemm: error: --op expects one of nn\\|tn\\|nt\\|tt, but got 'xx'"},
    {"", "bench gemm --dtype f64", 2,
     "ampkit bench gemm: error: --dtype expects f32, bf16, f16 or f16:exact\\|flush\\|alt, but got 'f64'"},
    {"", "bench gemm --dtype bf16:alt", 2,
     "ampkit bench gemm: error: --dtype: only f16 takes a mode, but got 'bf16:alt'"},
    {"", "bench gemm --epilogue FOO", 2, "ampkit bench gemm: error: --epilogue: unknown epilogue 'FOO' .*"},
    {"", "bench gemm --shapes 1x2", 2, "ampkit bench gemm: error: --shapes expects MxNxK items, but got '1x2'"},
    {"", "bench gemm --shapes 0x1x1", 2,
     "ampkit bench gemm: error: --shapes expects an integer in \\[1, 1048576\\], but got 0"},
    {"", "bench gemm --clock thread --threads 1,2 --peers none", 2,
     "ampkit bench gemm: error: --clock thread: only with --threads 1 .*"},
    {"OMP_WAIT_POLICY=active", "bench gemm --clock process --peers none", 2,
     "ampkit bench gemm: error: --clock process: needs OMP_WAIT_POLICY=passive .*"},
    {"", "bench gemm --clock thread --threads 1", 2,
     "ampkit bench gemm: error: --clock thread: the peers are timed on the wall clock; add --peers none"},
    {"", "bench gemm --peers mkl", 2,
     "ampkit bench gemm: error: --peers: unknown peer 'mkl' \\(openblas, onednn, torch, none\\)"},
    {"", "bench gemm --reps 1 --reps 2", 2, "ampkit bench gemm: error: option --reps given twice"},
    {"", "bench linear --pass sideways", 2, "ampkit bench linear: error: --pass: unknown pass 'sideways' .*"},
    {"", "bench linear --shapes 16x768", 2,
     "ampkit bench linear: error: --shapes expects BATCHxINxOUT items, but got '16x768'"},
    {"", "bench norm --op layer", 2,
     "ampkit bench norm: error: --op expects one of layer_norm\\|rms_norm\\|all, but got 'layer'"},
    {"", "bench norm --dtype f64", 2,
     "ampkit bench norm: error: --dtype expects f32, bf16, mixed, f16, mixed_f16 or all, but got 'f64'"},
    {"", "bench norm --no-peer=1", 2, "ampkit bench norm: error: option --no-peer takes no value, but got '1'"},
    {"", "check fp16 --fp16-model MI200", 2,
     "ampkit check fp16: error: --fp16-model: expected one of cpu, mi200, but got 'MI200'"},
    {"", "check fp16 --fp16-alt-impl sometimes", 2, "ampkit check fp16: error: --fp16-alt-impl: .*'sometimes'.*"},
    {"", "check fp16 --grad-scale -1", 2,
     "ampkit check fp16: error: --grad-scale expects a positive finite number, but got '-1'"},
    {"", "check fp16 --batch 0", 2,
     "ampkit check fp16: error: --batch expects an integer in \\[1, 65536\\], but got 0"},
    // Element counts that overflow, and work over a command's limit: refused, exit 2.
    {"", "bench norm --shapes 4294967296x4294967296x4294967296", 2,
     "ampkit bench norm: error: --shapes: 4294967296x4294967296x4294967296 has 7.92282e\\+28 elements; expected at "
     "most 2\\^36 .*"},
    {"", "bench norm --shapes 1099511627776x1099511627776", 2,
     "ampkit bench norm: error: --shapes: .* expected at most 2\\^36 .*"},
    {"", "check fp16 --batch 65536 --in 16384 --out 16384", 2,
     "ampkit check fp16: error: --batch 65536 x --in 16384 x --out 16384 = 1.75922e\\+13 multiply-adds per exact "
     "product; at most 2\\^31 .* estimated .* h\\)"},
    // Buffers that cannot fit in the memory available now: refused up front, exit 1.
    {"", "bench gemm --shapes 1000000x1000000x1000000", 1,
     "ampkit bench gemm: error: --shapes: the largest case needs 14.6 TiB of buffers, but .* are available now "
     "\\(MemAvailable\\)"},
    {"", "bench linear --shapes 1000000x1000000x1000000", 1,
     "ampkit bench linear: error: --shapes: the largest shape needs 29.1 TiB of buffers, but .* are available now "
     "\\(MemAvailable\\)"},
    // The thread environment.
    {"OMP_NUM_THREADS=100000", "info", 2,
     "ampkit info: error: OMP_NUM_THREADS expects a thread count in \\[1, 1024\\], but got '100000'"},
    {"OMP_NUM_THREADS=100000", "bench gemm --quick", 2, "ampkit bench gemm: error: OMP_NUM_THREADS expects .*"},
    {"OMP_NUM_THREADS=1025,1", "check fp16", 2,
     "ampkit check fp16: error: OMP_NUM_THREADS expects .* but got '1025,1'"},
    {"OMP_NUM_THREADS=lots", "info", 0, ".*"},  // OpenMP warns about the value and ignores it
    // What works.
    {"", "info --kernels", 0, ""},
    {"OMP_NUM_THREADS=4,2", "info", 0, ""},
    {"", "check fp16 --fp16-model mi200 --batch 16 --in 8 --out 8", 0, ""},
    {"", "check kernels --quick --isa ref", 0, ""},
    {"", "bench train --steps 0", 2, "ampkit bench train: error: --steps .*"},
    {"", "bench train --precision fp8", 2, "ampkit bench train: error: --precision .*"},
    {"", "bench train --width 65 --heads 2", 2,
     "ampkit bench train: error: --width 65 must be a multiple of --heads 2.*"},
    {"", "bench train --device tpu", 2, "ampkit bench train: error: --device .*"},
};

struct Outcome {
  int exit_code = -1;
  std::string stderr_first_line;
};

Outcome run_ampkit(const Invocation& inv) {
  char path[] = "/tmp/ampkit_cli_test_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return {};
  close(fd);
  const std::string command = std::string(inv.env) + " " AMPKIT_CLI_PATH " " + inv.args + " >/dev/null 2>" + path;
  const int status = std::system(command.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream err(path);
  std::getline(err, o.stderr_first_line);
  std::remove(path);
  return o;
}

class CliInvocation : public testing::TestWithParam<Invocation> {};

TEST_P(CliInvocation, ExitCodeAndFirstLineOfStderr) {
  const Invocation& inv = GetParam();
  const Outcome o = run_ampkit(inv);
  EXPECT_EQ(o.exit_code, inv.exit_code) << "ampkit " << inv.args << "\n  stderr: " << o.stderr_first_line;
  EXPECT_TRUE(std::regex_match(o.stderr_first_line, std::regex(inv.stderr_first_line)))
      << "ampkit " << inv.args << "\n  stderr:   " << o.stderr_first_line << "\n  expected: " << inv.stderr_first_line;
}

// Test names from the row: its index and its arguments with every other character as '_'
// ("12_bench_gemm___peers_mkl"), so CTest lists what each case runs.
std::string invocation_name(const testing::TestParamInfo<Invocation>& info) {
  std::string name = std::to_string(info.index) + "_" + std::string(info.param.args).substr(0, 60);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Table, CliInvocation, testing::ValuesIn(kInvocations), invocation_name);

// bench norm with a shape inside the element limit whose buffers exceed the memory available:
// refused up front (exit 1), not skipped into an empty run.
TEST(CliInvocationMemory, NormShapeBeyondMemoryIsRefused) {
  const double need = 4.0 * 4.0 * static_cast<double>(std::int64_t{1} << 36);
  if (static_cast<double>(tools::available_memory_bytes()) > need) GTEST_SKIP() << "this machine has 1 TiB free";
  const Outcome o = run_ampkit({"", "bench norm --shapes 65536x1048576 --dtype f32", 1, ""});
  EXPECT_EQ(o.exit_code, 1) << o.stderr_first_line;
  EXPECT_TRUE(std::regex_match(o.stderr_first_line,
                               std::regex("ampkit bench norm: error: --shapes: shape 65536x1048576 needs 1.0 TiB of "
                                          "buffers \\(plus 1.5 GiB to spare\\), but .* are available now .*")))
      << o.stderr_first_line;
}

}  // namespace
}  // namespace ampkit::tools
