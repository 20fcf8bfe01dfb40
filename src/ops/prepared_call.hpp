// A prepared call of an op (ops layer, internal): the call's problem, decoded and validated once by
// the op's front end, and the kernel entry selected for it, so that running it again only calls
// `entry.run(problem)`. The public op calls are a prepare and one run; the graph executor prepares
// each node once (src/graph/ops/) and runs the prepared call at every step. What must still happen
// per call stays in the op's run function (src/ops/prepared_ops.hpp): the checks that read
// values (ids, targets), the host scalars, the counters.
#pragma once

#include <span>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// The process-wide state a kernel selection reads besides the problem: the ISA cap (AMPKIT_ISA /
/// set_isa_cap) and set_reference_kernels. The machine's features and the backends never change
/// within a process.
struct SelectionState {
  Isa isa = Isa::ref;
  bool reference = false;
  bool operator==(const SelectionState&) const = default;
};

inline SelectionState selection_state() { return {active_isa(), reference_kernels()}; }

/// The device of a problem (GEMM's, which keeps its GemmArgs, overloads it: found by ADL).
template <class Problem>
Device device_of(const Problem& p) {
  return p.device;
}

/// A validated problem and its entry of `list`. The entry is selected on the first entry() and
/// again only when the selection state changed since (two loads and a compare per call), so a
/// run honours the ISA cap and set_reference_kernels as an unprepared call does, and an empty
/// problem that runs no kernel selects none.
template <class Problem, class RunFn>
class PreparedCall {
 public:
  using Entry = KernelEntry<Problem, RunFn>;

  PreparedCall() = default;
  /// `fn` names the op in the error of a device whose list cannot run here (static string).
  PreparedCall(const char* fn, std::span<const Entry> list, const Problem& problem)
      : fn_(fn), list_(list), problem_(problem) {}

  const Problem& problem() const noexcept { return problem_; }
  /// For the per-call fields a run sets (a host scalar): never the operands or shapes.
  Problem& problem() noexcept { return problem_; }

  /// The entry that runs problem(). Throws (unsupported) when even the list's last entry cannot
  /// run on this machine, which only a device list can (validation already rejects a device
  /// this process cannot use).
  const Entry& entry() {
    const SelectionState now = selection_state();
    if (entry_ == nullptr || !(now == state_)) select(now);
    return *entry_;
  }

 private:
  void select(const SelectionState& now) {
    const Entry& chosen = select_kernel(list_, problem_);
    if (const char* why = kernel_unavailable_reason(chosen.needs))
      fail_with(ErrorKind::unsupported, fn_, "no kernel for ", device_name(device_of(problem_)), ": ", chosen.name, " ",
                why);
    entry_ = &chosen;
    state_ = now;
  }

  const char* fn_ = "";
  std::span<const Entry> list_;
  Problem problem_{};
  const Entry* entry_ = nullptr;
  SelectionState state_{};
};

}  // namespace ampkit::ops
