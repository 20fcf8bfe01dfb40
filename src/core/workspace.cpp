// The calling thread's workspace (core layer): see core/workspace.hpp.
#include "core/workspace.hpp"

#include <cstdint>
#include <cstdlib>

namespace ampkit {
namespace {

constexpr std::size_t kAlign = 4096;
constexpr int kSlots = static_cast<int>(WorkspaceSlot::count);

struct Slot {
  void* data = nullptr;
  std::size_t capacity = 0;
};

struct Workspace {
  Slot slots[kSlots];
  ~Workspace() {
    for (Slot& s : slots) std::free(s.data);
  }
};

thread_local Workspace t_workspace;

}  // namespace

void* workspace(WorkspaceSlot slot, std::size_t bytes, bool* grew) noexcept {
  Slot& s = t_workspace.slots[static_cast<int>(slot)];
  if (grew != nullptr) *grew = false;
  if (bytes <= s.capacity) return s.data;
  std::free(s.data);
  s.data = nullptr;
  s.capacity = 0;
  if (bytes > SIZE_MAX / 2) return nullptr;
  const std::size_t size = (bytes + bytes / 4 + kAlign - 1) / kAlign * kAlign;
  void* p = std::aligned_alloc(kAlign, size);
  if (p == nullptr) return nullptr;
  s.data = p;
  s.capacity = size;
  if (grew != nullptr) *grew = true;
  return p;
}

std::size_t workspace_bytes(WorkspaceSlot slot) noexcept { return t_workspace.slots[static_cast<int>(slot)].capacity; }

void release_workspace(WorkspaceSlot slot) noexcept {
  Slot& s = t_workspace.slots[static_cast<int>(slot)];
  std::free(s.data);
  s.data = nullptr;
  s.capacity = 0;
}

}  // namespace ampkit
