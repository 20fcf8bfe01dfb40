// The calling thread's workspace (core layer): one grow-only set of named scratch buffers per
// thread, shared by every family that needs scratch between calls (the GEMM's packed operands,
// attention, norm, embedding, Linear's db without dw). Each slot is 4096-byte aligned, grows by
// a quarter again (rounded to pages) when a call needs more than any earlier one, and never
// shrinks until released, so a training loop allocates only while it warms up. Slots are
// separate buffers: a family may hold one while it calls another (Linear holds its db slots
// while the GEMM takes its own). What is in a slot is the caller's; results never depend on it.
#pragma once

#include <cstddef>

namespace ampkit {

enum class WorkspaceSlot : int {
  gemm,               // packed operands and epilogue scratch (cpu::gemm_workspace)
  attention,          // the attention kernels' per-thread fp32 slices
  norm_blocks,        // the norm kernels' dgamma/dbeta block partials
  norm_rows,          // the norm kernels' rows widened to fp32
  embedding,          // embedding_backward's token order
  linear_db_ones,     // Linear's db without dw: the row of ones
  linear_db_product,  // ... and its discarded product
  count
};

/// At least `bytes` bytes of the calling thread's `slot`, 4096-byte aligned (bytes == 0 gives
/// the slot as it is, possibly null). Valid until the next call for that slot on this thread or
/// release_workspace. When it grows, the old buffer is freed first and *grew (if given) is set
/// (the contents are lost); otherwise *grew is cleared. Returns nullptr when it cannot grow
/// (the slot is then empty): the caller reports the failure in its own terms.
void* workspace(WorkspaceSlot slot, std::size_t bytes, bool* grew = nullptr) noexcept;

/// The bytes the calling thread's `slot` holds now (0 when empty or released).
std::size_t workspace_bytes(WorkspaceSlot slot) noexcept;

/// Frees the calling thread's `slot`; the next call takes memory again.
void release_workspace(WorkspaceSlot slot) noexcept;

}  // namespace ampkit
