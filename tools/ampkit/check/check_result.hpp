// What `ampkit check kernels` found for one op and kernel (tools layer, check/): cases run, cases
// outside their tolerance, the worst |got - reference| / tolerance, and the first failure.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "tools/ampkit/check/check_tensor.hpp"

namespace ampkit::tools::check {

struct CheckResult {
  int cases = 0, failed = 0;
  double worst = 0.0;         // the largest ratio over every compared element
  std::string first_failure;  // the case and the output that failed first
};

/// Results keyed by (op, kernel name).
using CheckResults = std::map<std::pair<std::string, std::string>, CheckResult>;

/// Records one case: `deviations` of its outputs, named for the failure message.
inline void record(CheckResults& results, const std::string& op, const std::string& kernel, const std::string& what,
                   const std::map<std::string, Deviation>& deviations) {
  CheckResult& r = results[{op, kernel}];
  r.cases += 1;
  bool failed = false;
  for (const auto& [output, d] : deviations) {
    r.worst = d.ratio > r.worst ? d.ratio : r.worst;
    if (!d.ok() && !failed) {
      failed = true;
      if (r.first_failure.empty())
        r.first_failure = what + ": " + output +
                          (d.nan_mismatch ? " NaN where the reference is not (or not NaN where it is)"
                                          : " off by " + std::to_string(d.ratio) + "x its tolerance");
    }
  }
  r.failed += failed ? 1 : 0;
}

}  // namespace ampkit::tools::check
