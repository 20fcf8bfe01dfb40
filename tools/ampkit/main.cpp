// `ampkit` — the command-line tool (tools layer): dispatches to the subcommands of commands.hpp.
// Exit codes: 0 success, 1 an ampkit::Error (bad input, unsupported request), 2 usage error.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "tools/ampkit/commands.hpp"
#include "ampkit/core/error.hpp"

namespace {

struct Command {
  std::string_view name;
  std::string_view sub;  // "" when the command has no subcommand
  int (*run)(const ampkit::tools::Args&);
  std::string_view help;
};

constexpr Command kCommands[] = {
    {"info", "", ampkit::tools::run_info, "CPU features, active ISA and thread count"},
    {"bench", "gemm", ampkit::tools::run_bench_gemm, "gemm GFLOP/s vs the machine's peaks, OpenBLAS, oneDNN"},
    {"bench", "linear", ampkit::tools::run_bench_linear, "Linear forward/backward GFLOP/s vs peaks and peers"},
    {"bench", "norm", ampkit::tools::run_bench_norm, "LayerNorm/RMSNorm speed vs copy bandwidth and oneDNN"},
    {"check", "fp16", ampkit::tools::run_check_fp16, "fp16 gradient underflow (MI200 model) and the alt-impl policy"},
};

void print_usage() {
  std::fprintf(stderr, "usage: ampkit <command> [options]   (ampkit <command> --help)\n\n");
  for (const Command& c : kCommands) {
    std::string label(c.name);  // appended piecewise: g++ 12 -Wrestrict misfires on "" + string
    if (!c.sub.empty()) label.append(" ").append(c.sub);
    std::fprintf(stderr, "  %-14s %.*s\n", label.c_str(), static_cast<int>(c.help.size()), c.help.data());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string_view name = argv[1];
  for (const Command& c : kCommands) {
    if (c.name != name) continue;
    int first_arg = 2;
    if (!c.sub.empty()) {
      if (argc < 3 || c.sub != argv[2]) continue;
      first_arg = 3;
    }
    ampkit::tools::Args args(argv + first_arg, argv + argc);
    try {
      return c.run(args);
    } catch (const ampkit::Error& e) {
      std::fprintf(stderr, "ampkit %s: error: %s\n", argv[1], e.what());
      return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ampkit %s: internal error: %s\n", argv[1], e.what());
      return 1;
    }
  }
  std::fprintf(stderr, "ampkit: unknown command '");
  for (int i = 1; i < argc && i < 3; ++i) std::fprintf(stderr, "%s%s", i > 1 ? " " : "", argv[i]);
  std::fprintf(stderr, "'\n");
  print_usage();
  return 2;
}
