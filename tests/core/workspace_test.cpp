// The per-thread workspace (core/workspace.hpp): aligned, grow-only, one buffer per slot and per
// thread, released on request.
#include "core/workspace.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

namespace ampkit {
namespace {

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4096 == 0; }

TEST(Workspace, GrowsOnlyAndKeepsItsBuffer) {
  constexpr WorkspaceSlot s = WorkspaceSlot::attention;
  release_workspace(s);
  EXPECT_EQ(workspace_bytes(s), 0u);
  bool grew = false;
  void* p = workspace(s, 1000, &grew);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(grew);
  EXPECT_TRUE(aligned(p));
  const std::size_t held = workspace_bytes(s);
  EXPECT_GE(held, 1000u);
  EXPECT_EQ(held % 4096, 0u);
  std::memset(p, 0x5a, 1000);
  EXPECT_EQ(workspace(s, 10, &grew), p);  // smaller: the same buffer, contents kept
  EXPECT_FALSE(grew);
  EXPECT_EQ(static_cast<unsigned char*>(p)[999], 0x5a);
  EXPECT_EQ(workspace_bytes(s), held);
  void* q = workspace(s, held + 1, &grew);
  ASSERT_NE(q, nullptr);
  EXPECT_TRUE(grew);
  EXPECT_TRUE(aligned(q));
  EXPECT_GT(workspace_bytes(s), held);
  release_workspace(s);
  EXPECT_EQ(workspace_bytes(s), 0u);
}

TEST(Workspace, SlotsAndThreadsAreSeparate) {
  release_workspace(WorkspaceSlot::norm_blocks);
  release_workspace(WorkspaceSlot::norm_rows);
  void* a = workspace(WorkspaceSlot::norm_blocks, 64);
  void* b = workspace(WorkspaceSlot::norm_rows, 64);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  void* other = nullptr;
  std::size_t other_before = 1;
  std::thread t([&] {
    other_before = workspace_bytes(WorkspaceSlot::norm_blocks);
    other = workspace(WorkspaceSlot::norm_blocks, 64);
    EXPECT_NE(other, nullptr);
  });
  t.join();
  EXPECT_EQ(other_before, 0u);  // a new thread starts empty
  EXPECT_NE(other, a);
  EXPECT_EQ(workspace(WorkspaceSlot::norm_blocks, 64), a);
  release_workspace(WorkspaceSlot::norm_blocks);
  release_workspace(WorkspaceSlot::norm_rows);
}

TEST(Workspace, AnImpossibleSizeGivesNull) {
  constexpr WorkspaceSlot s = WorkspaceSlot::embedding;
  bool grew = true;
  EXPECT_EQ(workspace(s, SIZE_MAX, &grew), nullptr);
  EXPECT_FALSE(grew);
  EXPECT_EQ(workspace_bytes(s), 0u);
  EXPECT_NE(workspace(s, 8), nullptr);  // usable again
  release_workspace(s);
}

}  // namespace
}  // namespace ampkit
