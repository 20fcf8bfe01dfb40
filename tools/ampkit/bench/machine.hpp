// What a benchmark report says about where it ran (tools layer, bench/): the CPU model, core
// count and memory, and the date. Printed in the table headers of every `ampkit bench` command.
#pragma once

#include <string>

namespace ampkit::tools::bench {

/// "AMD EPYC, 2 cpus, 23.4 GiB" from /proc/cpuinfo and /proc/meminfo (best effort).
std::string machine_description();
/// Today's date, "YYYY-MM-DD" (local time).
std::string today();

}  // namespace ampkit::tools::bench
