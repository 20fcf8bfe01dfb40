// The calling thread's workspace (core layer): see core/workspace.hpp.
#include "core/workspace.hpp"

#include <cstdint>
#include <new>

namespace ampkit {
namespace {

constexpr std::size_t kAlign = 4096;
constexpr int kSlots = static_cast<int>(WorkspaceSlot::count);

struct Slot {
  void* data = nullptr;
  std::size_t capacity = 0;
};

// Through the global operator new, so the no-allocation tests see a slot that grows.
void free_slot(Slot& s) noexcept {
  ::operator delete (s.data, std::align_val_t{kAlign});
  s.data = nullptr;
  s.capacity = 0;
}

struct Workspace {
  Slot slots[kSlots];
  ~Workspace() {
    for (Slot& s : slots) free_slot(s);
  }
};

thread_local Workspace t_workspace;

}  // namespace

void* workspace(WorkspaceSlot slot, std::size_t bytes, bool* grew) noexcept {
  Slot& s = t_workspace.slots[static_cast<int>(slot)];
  if (grew != nullptr) *grew = false;
  if (bytes <= s.capacity) return s.data;
  free_slot(s);
  if (bytes > SIZE_MAX / 2) return nullptr;
  const std::size_t size = (bytes + bytes / 4 + kAlign - 1) / kAlign * kAlign;
  void* p = ::operator new (size, std::align_val_t{kAlign}, std::nothrow);
  if (p == nullptr) return nullptr;
  s.data = p;
  s.capacity = size;
  if (grew != nullptr) *grew = true;
  return p;
}

std::size_t workspace_bytes(WorkspaceSlot slot) noexcept { return t_workspace.slots[static_cast<int>(slot)].capacity; }

void release_workspace(WorkspaceSlot slot) noexcept { free_slot(t_workspace.slots[static_cast<int>(slot)]); }

}  // namespace ampkit
