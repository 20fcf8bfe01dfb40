// The top level of the `ampkit` command (tools layer, cli/): finds the subcommand in main.cpp's
// table, checks the environment the process was started with, runs the subcommand and maps
// what escapes it to an exit code and one line on stderr.
#pragma once

#include <span>
#include <string_view>

#include "ampkit/core/error.hpp"
#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools::cli {

/// Exit codes of `ampkit` (also printed by `ampkit --help`).
constexpr int kExitOk = 0;
constexpr int kExitError = 1;      // ampkit::Error: invalid argument, unsupported, out of memory
constexpr int kExitUsage = 2;      // UsageError: unknown command or option, bad value, over a limit
constexpr int kExitInternal = 70;  // ampkit::Error of kind internal, or any other exception (a bug)

/// The most threads any subcommand runs (--threads and OMP_NUM_THREADS).
constexpr int kMaxThreads = 1024;

/// One subcommand: "bench" + "gemm", or "info" + "".
struct Command {
  std::string_view name;
  std::string_view sub;  // "" when the command has no subcommand
  int (*run)(const Args& args);
  std::string_view summary;
};

/// The exit code for an ampkit::Error of `kind`.
int exit_code(ErrorKind kind);

/// Throws UsageError when OMP_NUM_THREADS (its first level) asks for more than kMaxThreads
/// threads. Values OpenMP itself rejects (and warns about) are left to it; nothing when unset.
void check_thread_environment(const char* omp_num_threads);

/// Runs the command of argv in `commands`; returns the process exit code.
int run_main(int argc, char** argv, std::span<const Command> commands);

}  // namespace ampkit::tools::cli
