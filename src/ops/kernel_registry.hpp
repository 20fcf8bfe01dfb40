// The kernel registry every op shares (ops layer, internal): a kernel list per op and device,
// best first, reference last; each entry says what hardware it needs and why it declines a
// problem. The op's front end selects from it once per call (once per prepared call,
// src/ops/prepared_call.hpp); `ampkit info --kernels`, the
// kernel_name queries and the tests read the same list. The graph's op table and the CUDA backend
// plug in here (docs/ARCHITECTURE.md, "Kernel registry").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/ops/kernel_info.hpp"

namespace ampkit::ops {

/// What an entry needs from the machine before it can take any problem.
struct KernelNeeds {
  Device device = Device::cpu;
  Isa isa = Isa::ref;     // CPU: the lowest ISA level (and the AMPKIT_ISA cap) it needs
  bool bf16_dot = false;  // CPU: AVX512_BF16 instructions
};

/// Why an entry with `needs` cannot run on this machine now ("needs AVX-512, but the machine's
/// best is avx2", "capped by AMPKIT_ISA / set_isa_cap at avx2", ...), or nullptr when it can.
/// Static strings only: selecting a kernel never allocates. Defined by the device layer
/// (src/cpu/common/kernel_needs.cpp).
const char* kernel_unavailable_reason(const KernelNeeds& needs);

/// One entry of an op's list. `declines` (may be null: takes every problem) returns why the entry
/// does not take a valid problem ("only bf16 operands", "min(m, n) > 16"), or nullptr.
template <class Problem, class RunFn>
struct KernelEntry {
  const char* name;  // dtype, tile and ISA: gemm_ukernel_f32_32x12_avx512 (file and function too)
  KernelNeeds needs;
  const char* (*declines)(const Problem& problem);
  RunFn run;
};

/// Why `entry` does not take `problem` now (hardware first, then the problem), or nullptr.
template <class Problem, class RunFn>
const char* decline_reason(const KernelEntry<Problem, RunFn>& entry, const Problem& problem) {
  if (const char* why = kernel_unavailable_reason(entry.needs)) return why;
  return entry.declines != nullptr ? entry.declines(problem) : nullptr;
}

/// Kernel selections made on this thread (select_kernel counts each; reference_kernels.cpp):
/// read through kernel_selections_on_this_thread, by the tests that a prepared call selects
/// nothing per run. A thread-local increment per selection.
extern constinit thread_local std::uint64_t t_kernel_selections;

inline std::uint64_t kernel_selections_on_this_thread() noexcept { return t_kernel_selections; }

/// The first entry that takes `problem`. The last entry (the reference) takes every valid
/// problem, so there always is one. Under set_reference_kernels(true), the last entry.
template <class Problem, class RunFn>
const KernelEntry<Problem, RunFn>& select_kernel(std::span<const KernelEntry<Problem, RunFn>> list,
                                                 const Problem& problem) {
  ++t_kernel_selections;
  if (reference_kernels()) return list.back();  // set_reference_kernels(true): the reference, always
  for (const auto& entry : list)
    if (decline_reason(entry, problem) == nullptr) return entry;
  return list.back();
}

/// Every entry with its reason, the selected one marked (for kernel_statuses / ampkit info).
template <class Problem, class RunFn>
std::vector<KernelStatus> kernel_statuses(std::span<const KernelEntry<Problem, RunFn>> list, const Problem& problem) {
  std::vector<KernelStatus> out;
  bool chosen = false;
  const bool reference_only = reference_kernels();
  for (const auto& entry : list) {
    const bool last = &entry == &list.back();
    const char* why = reference_only && !last ? "set_reference_kernels(true): only the reference runs"
                                              : decline_reason(entry, problem);
    out.push_back({entry.name, why != nullptr ? why : "", why == nullptr && !chosen});
    chosen = chosen || why == nullptr;
  }
  return out;
}

/// Every entry with the reason it cannot run on this machine now, asking no problem (an entry
/// that also declines problems says so per call, in kernel_statuses); the first available one
/// marked. For kernel_lists() and `ampkit info --kernels`.
template <class Problem, class RunFn>
std::vector<KernelStatus> kernel_availability(std::span<const KernelEntry<Problem, RunFn>> list) {
  std::vector<KernelStatus> out;
  bool chosen = false;
  for (const auto& entry : list) {
    const char* why = kernel_unavailable_reason(entry.needs);
    out.push_back({entry.name, why != nullptr ? why : "", why == nullptr && !chosen});
    chosen = chosen || why == nullptr;
  }
  return out;
}

}  // namespace ampkit::ops
