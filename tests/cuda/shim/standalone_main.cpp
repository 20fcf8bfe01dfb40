// The driver of ampkit_cuda_selftest (tests layer): runs every case of tests/cuda/ registered on
// the gtest shim, prints PASS / FAIL / SKIP per case and a summary; exit 1 when any case failed.
// Usage: ampkit_cuda_selftest [substring of suite.name to run]
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>

#include "cuda/shim/gtest_shim.hpp"

namespace shim {

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

Outcome& outcome() {
  static Outcome o;
  return o;
}

Report::~Report() {
  if (skip_) {
    outcome().skipped = true;
    outcome().skip_reason = message_.str();
    return;
  }
  ++outcome().failures;
  if (outcome().failures <= 5) std::printf("  %s:%d: %s\n    %s\n", file_, line_, what_, message_.str().c_str());
}

}  // namespace shim

int main(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  int passed = 0, failed = 0, skipped = 0;
  for (const shim::Case& c : shim::registry()) {
    const std::string name = std::string(c.suite) + "." + c.name;
    if (!filter.empty() && name.find(filter) == std::string::npos) continue;
    shim::outcome() = {};
    const auto start = std::chrono::steady_clock::now();
    try {
      c.body();
    } catch (const std::exception& e) {
      ++shim::outcome().failures;
      std::printf("  uncaught exception: %s\n", e.what());
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const shim::Outcome& o = shim::outcome();
    if (o.failures > 0) {
      ++failed;
      std::printf("FAIL %s (%d failures, %.0f ms)\n", name.c_str(), o.failures, ms);
    } else if (o.skipped) {
      ++skipped;
      std::printf("SKIP %s: %s\n", name.c_str(), o.skip_reason.c_str());
    } else {
      ++passed;
      std::printf("PASS %s (%.0f ms)\n", name.c_str(), ms);
    }
    std::fflush(stdout);
  }
  std::printf("summary: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return failed > 0 ? 1 : 0;
}
