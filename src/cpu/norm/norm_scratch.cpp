// Per-thread fp32 scratch of the norm kernels (kernels layer): the dgamma/dbeta block partials
// and rows widened to f32, two slots of the thread's workspace (core/workspace.hpp) that grow
// only when a call needs more than any earlier one on the thread.
#include <cstdint>

#include "ampkit/core/error.hpp"
#include "core/workspace.hpp"
#include "cpu/norm/norm_kernels.hpp"

namespace ampkit::cpu {
namespace {

float* grow(WorkspaceSlot slot, std::int64_t floats) {
  void* p = workspace(slot, static_cast<std::size_t>(floats) * sizeof(float));
  // On the calling thread (one-thread calls, the reference) this reaches the caller before any
  // output is written; validation bounds n so the byte count cannot overflow.
  if (p == nullptr && floats > 0)
    fail_with(ErrorKind::out_of_memory, "norm", "could not allocate ", floats, " floats of per-thread scratch");
  return static_cast<float*>(p);
}

}  // namespace

float* norm_scratch(std::int64_t floats) { return grow(WorkspaceSlot::norm_blocks, floats); }

float* norm_row_scratch(std::int64_t floats) { return grow(WorkspaceSlot::norm_rows, floats); }

}  // namespace ampkit::cpu
