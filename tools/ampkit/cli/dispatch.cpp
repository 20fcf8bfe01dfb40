// The top level of the `ampkit` command (tools layer, cli/): the usage text with the exit codes,
// the environment check, the subcommand lookup and the mapping of errors to exit codes.
#include "tools/ampkit/cli/dispatch.hpp"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "ampkit/version.hpp"
#include "tools/ampkit/common/build_info.hpp"

namespace ampkit::tools::cli {
namespace {

std::string label(const Command& c) {
  std::string s(c.name);  // appended piecewise: g++ 12 -Wrestrict misfires on "" + string
  if (!c.sub.empty()) s.append(" ").append(c.sub);
  return s;
}

void print_usage(std::FILE* out, std::span<const Command> commands) {
  std::fprintf(out, "usage: ampkit <command> [options]   (ampkit <command> --help; ampkit --version)\n\ncommands:\n");
  for (const Command& c : commands)
    std::fprintf(out, "  %-14s %.*s\n", label(c).c_str(), static_cast<int>(c.summary.size()), c.summary.data());
  std::fprintf(out,
               "\nexit codes:\n"
               "  0   success\n"
               "  1   ampkit error: invalid argument, unsupported on this machine or build, out of memory\n"
               "      (including a request whose buffers would not fit in the memory available now)\n"
               "  2   usage error: unknown command or option, missing or bad value, a command's size limit,\n"
               "      OMP_NUM_THREADS above %d\n"
               "  70  internal error (a bug in ampkit)\n"
               "Errors are one line on stderr: \"ampkit <command>: error: <what>\".\n",
               kMaxThreads);
}

const Command* find_command(int argc, char** argv, std::span<const Command> commands, int* first_arg) {
  const std::string_view name = argv[1];
  for (const Command& c : commands) {
    if (c.name != name) continue;
    if (c.sub.empty()) {
      *first_arg = 2;
      return &c;
    }
    if (argc >= 3 && c.sub == argv[2]) {
      *first_arg = 3;
      return &c;
    }
  }
  return nullptr;
}

// Names the subcommands of `name` ("gemm, linear, norm"), or "" when it has none.
std::string subcommands_of(std::string_view name, std::span<const Command> commands) {
  std::string list;
  for (const Command& c : commands)
    if (c.name == name && !c.sub.empty()) list.append(list.empty() ? "" : ", ").append(c.sub);
  return list;
}

}  // namespace

int exit_code(ErrorKind kind) { return kind == ErrorKind::internal ? kExitInternal : kExitError; }

void check_thread_environment(const char* omp_num_threads) {
  if (omp_num_threads == nullptr) return;
  // OpenMP reads a list ("4,2" for nested levels); ampkit uses the first level. A value OpenMP
  // cannot read at all ("lots", "0") it reports and ignores itself; a count above the limit would
  // start that many threads in the first parallel region, so it is refused here.
  const std::vector<std::string> levels = split_list(omp_num_threads);
  if (levels.empty()) return;
  std::int64_t threads = 0;
  const std::string& first = levels.front();
  const auto result = std::from_chars(first.data(), first.data() + first.size(), threads);
  const bool number = result.ptr == first.data() + first.size();
  if (number && (result.ec == std::errc::result_out_of_range || threads > kMaxThreads))
    usage_fail("OMP_NUM_THREADS expects a thread count in [1, ", kMaxThreads, "], but got '", omp_num_threads, "'");
}

int run_main(int argc, char** argv, std::span<const Command> commands) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    // Asked for: stdout, exit 0. No command at all: a usage error, stderr, exit 2.
    print_usage(argc < 2 ? stderr : stdout, commands);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  if (std::string_view(argv[1]) == "--version") {
    std::printf("ampkit %s (commit %s)\n", AMPKIT_VERSION, build_commit());
    return kExitOk;
  }
  int first_arg = 2;
  const Command* command = find_command(argc, argv, commands, &first_arg);
  if (command == nullptr) {
    const std::string subs = subcommands_of(argv[1], commands);
    if (subs.empty()) {
      std::fprintf(stderr, "ampkit: error: unknown command '%s' (ampkit --help lists the commands)\n", argv[1]);
      return kExitUsage;
    }
    if (argc >= 3 && (std::string_view(argv[2]) == "--help" || std::string_view(argv[2]) == "-h")) {
      print_usage(stdout, commands);  // "ampkit bench --help": the list names the subcommands
      return kExitOk;
    }
    std::string given = "none";  // (appended, not "'" + std::string: GCC 12's false -Wrestrict)
    if (argc >= 3) given = std::string("'").append(argv[2]).append("'");
    std::fprintf(stderr, "ampkit %s: error: expected a subcommand (%s), but got %s (ampkit --help)\n", argv[1],
                 subs.c_str(), given.c_str());
    return kExitUsage;
  }
  const std::string name = label(*command);
  try {
    check_thread_environment(std::getenv("OMP_NUM_THREADS"));
    return command->run(Args(argv + first_arg, argv + argc));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ampkit %s: error: %s\n", name.c_str(), e.what());
    return kExitUsage;
  } catch (const Error& e) {
    std::fprintf(stderr, "ampkit %s: %s: %s\n", name.c_str(),
                 e.kind() == ErrorKind::internal ? "internal error" : "error", e.what());
    return exit_code(e.kind());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "ampkit %s: error: out of memory\n", name.c_str());
    return kExitError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ampkit %s: internal error: %s\n", name.c_str(), e.what());
    return kExitInternal;
  }
}

}  // namespace ampkit::tools::cli
