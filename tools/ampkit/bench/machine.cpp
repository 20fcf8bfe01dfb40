// Where a benchmark ran (tools layer, bench/): CPU model, cpus, memory, date. See machine.hpp.
#include "tools/ampkit/bench/machine.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>

namespace ampkit::tools::bench {

std::string machine_description() {
  std::string model = "unknown cpu";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      if (const std::size_t colon = line.find(':'); colon != std::string::npos)
        model = line.substr(std::min(colon + 2, line.size()));
      break;
    }
  }
  std::size_t total_kib = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string name, unit;
  std::size_t kib = 0;
  while (meminfo >> name >> kib >> unit)
    if (name == "MemTotal:") total_kib = kib;
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << model << ", " << sysconf(_SC_NPROCESSORS_ONLN) << " cpus, "
      << static_cast<double>(total_kib) / (1024.0 * 1024.0) << " GiB";
  return out.str();
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &local);
  return buf;
}

}  // namespace ampkit::tools::bench
