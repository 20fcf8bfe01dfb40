// The options every `ampkit bench` subcommand accepts (tools layer, bench/). See options.hpp.
#include "tools/ampkit/bench/options.hpp"

#include <string>

#include "tools/ampkit/cli/dispatch.hpp"

namespace ampkit::tools::bench {

void add_common_options(cli::OptionParser& parser, CommonOptions* out, const char* threads_default) {
  parser
      .thread_list(
          "--threads", &out->threads,
          std::string("thread counts, each at most 1024, or all: 1 and every core\n(default ") + threads_default + ")")
      .integer("--reps", "N", 1, 100000, &out->reps, "minimum timed samples per case")
      .flag("--quick", &out->quick, "a small subset with short timing, for a smoke run")
      .flag("--json", &out->json, "one JSON object per line and case instead of a table");
}

}  // namespace ampkit::tools::bench
