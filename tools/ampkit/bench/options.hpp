// The options every `ampkit bench` subcommand accepts (tools layer, bench/): thread counts,
// --json, --reps, --quick, registered on the subcommand's cli::OptionParser.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools::bench {

/// The options of every bench subcommand.
struct CommonOptions {
  std::vector<int> threads;          // --threads 1,2 (empty: the subcommand's default)
  bool json = false;                 // --json: one JSON object per line instead of a table
  std::optional<std::int64_t> reps;  // --reps N: minimum timed samples per case
  bool quick = false;                // --quick: a small subset for a smoke run
};

/// Registers --threads (each in [1, cli::kMaxThreads]; `threads_default` says the subcommand's
/// default in --help), --json, --reps (1..100000), --quick.
void add_common_options(cli::OptionParser& parser, CommonOptions* out, const char* threads_default = "1,2");

}  // namespace ampkit::tools::bench
