// `ampkit check kernels` (tools layer, check/): the numerics self-test a user runs after
// installing. On every ISA this machine has (or those given), each case of every kernel family
// (GEMM, norms, GELU, attention, convert, elementwise, embedding, optimizers, softmax
// cross-entropy: <family>_check.cpp) runs at that ISA and on the reference kernels (plain loops,
// double sums, one rounding; set_reference_kernels) and is compared with the bound of
// ampkit/numerics/error_bounds.hpp for its dtypes and reduction length. Prints one row per op, ISA
// and kernel that ran; exits 1 when any case is out of tolerance.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cpu.hpp"
#include "tools/ampkit/check/check_families.hpp"
#include "tools/ampkit/cli/options.hpp"
#include "tools/ampkit/commands.hpp"

namespace ampkit::tools {

int run_check_kernels(const Args& args) {
  std::optional<std::string> isa_list;
  std::optional<std::int64_t> seed;
  bool quick = false;
  cli::OptionParser p("check kernels",
                      "Every kernel family (gemm, layer/rms norm, gelu, attention, convert, elementwise,\n"
                      "embedding, adamw/sgd/grad norm/all_finite, softmax cross-entropy) against the reference\n"
                      "kernels on random inputs (from --seed), on every ISA this machine has; exits 1 when any\n"
                      "result is outside its tolerance.");
  p.text("--isa", "LIST", &isa_list, "ISAs to check, e.g. avx512,avx2 (default: every one the machine has)")
      .integer("--seed", "N", 0, INT64_MAX, &seed, "the inputs' seed (default 1)")
      .flag("--quick", &quick, "fewer and smaller shapes (a few seconds per ISA)")
      .footer(
          "A row's worst ratio is the largest |result - reference| / tolerance over its cases (<= 1\n"
          "passes). The tolerances are the error bounds of docs/NUMERICS.md (written once, in\n"
          "ampkit/numerics/error_bounds.hpp): fp32 accumulation over the reduction length, scaled by\n"
          "sums of magnitudes, one rounding of each output to its dtype; conversions, embedding\n"
          "lookups and all_finite must match exactly.");
  if (!p.parse(args)) return 0;
  std::vector<Isa> isas;
  if (isa_list) {
    std::string rest = *isa_list;
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      Isa isa = Isa::ref;
      try {
        isa = parse_isa(rest.substr(0, comma), "--isa");
      } catch (const Error& e) {
        cli::usage_fail(e.what());  // a bad value on the command line: exit 2
      }
      if (static_cast<int>(isa) > static_cast<int>(cpu_features().best()))
        cli::usage_fail("--isa: '", isa_name(isa), "' is not available on this machine (best: '",
                        isa_name(cpu_features().best()), "')");
      isas.push_back(isa);
      rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    }
  } else {
    for (int i = static_cast<int>(cpu_features().best()); i >= 0; --i) isas.push_back(static_cast<Isa>(i));
  }
  const Isa cap_before = active_isa();
  bool all_ok = true;
  std::printf("%-30s %-7s %-36s %6s %7s %12s  %s\n", "op", "isa", "kernel", "cases", "failed", "worst ratio", "");
  for (const Isa isa : isas) {
    check::CheckResults results;
    const auto s = static_cast<std::uint64_t>(seed.value_or(1));
    for (const auto family :
         {check::check_gemm, check::check_norms, check::check_activation, check::check_attention, check::check_convert,
          check::check_elementwise, check::check_embedding, check::check_optimizers, check::check_cross_entropy})
      family(isa, s, quick, results);
    for (const auto& [key, r] : results) {
      all_ok = all_ok && r.failed == 0;
      std::printf("%-30s %-7s %-36s %6d %7d %12.3f  %s\n", key.first.c_str(), std::string(isa_name(isa)).c_str(),
                  key.second.c_str(), r.cases, r.failed, r.worst, r.failed ? "FAIL" : "ok");
      if (r.failed) std::printf("    first failure: %s\n", r.first_failure.c_str());
    }
  }
  set_isa_cap(cap_before);
  std::printf("%s\n", all_ok ? "all kernels agree with the reference within their tolerances"
                             : "SOME KERNELS DISAGREE WITH THE REFERENCE (rows marked FAIL)");
  return all_ok ? 0 : 1;
}

}  // namespace ampkit::tools
