// Per-thread fp32 scratch of the attention kernels (kernels layer): one block of `threads` slices,
// taken on the calling thread so that a failed allocation reaches the caller as an Error before
// any output is written. Its slot of the thread's workspace (core/workspace.hpp) grows only when
// a call needs more than any earlier one.
#include <cstdint>

#include "ampkit/core/error.hpp"
#include "core/checked_math.hpp"
#include "core/workspace.hpp"
#include "cpu/attention/attention_rows.hpp"

namespace ampkit::cpu {

float* attention_scratch(std::int64_t floats_per_thread, int threads, const char* fn) {
  const auto floats = checked_mul(attention_pad(floats_per_thread), threads);
  const auto bytes = floats ? checked_mul(*floats, std::int64_t{sizeof(float)}) : std::nullopt;
  if (!bytes)
    fail_with(ErrorKind::out_of_memory, fn, "per-thread scratch of ", floats_per_thread, " floats for ", threads,
              " threads overflows int64");
  void* p = workspace(WorkspaceSlot::attention, static_cast<std::size_t>(*bytes));
  if (p == nullptr && *bytes > 0)
    fail_with(ErrorKind::out_of_memory, fn, "could not allocate ", *floats, " floats of per-thread scratch");
  return static_cast<float*>(p);
}

}  // namespace ampkit::cpu
