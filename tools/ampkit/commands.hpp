// The subcommands of the `ampkit` command-line tool (tools layer). Each lives in its own file
// and returns the process exit code; ampkit::Error escaping one becomes one line on stderr.
#pragma once

#include <string>
#include <vector>

namespace ampkit::tools {

using Args = std::vector<std::string>;

int run_info(const Args& args);        // info.cpp: CPU features, active ISA, threads

}  // namespace ampkit::tools
