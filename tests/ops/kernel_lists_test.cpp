// The one registry (src/ops/kernel_lists.cpp): every op's list is non-empty, names are unique
// within a list, the last entry of a CPU list is the reference and runs on every machine and
// under every AMPKIT_ISA cap, and an entry is unavailable exactly when the cap or the machine says
// so. The CUDA lists (gemm, the norms) follow, and without a usable GPU every entry says why.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "ampkit/device/cpu.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

TEST(KernelLists, EveryListEndsWithARunnableReference) {
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    const std::vector<KernelList> lists = kernel_lists();
    ASSERT_GE(lists.size(), 24u);
    int cuda_lists = 0;
    for (const KernelList& list : lists) {
      SCOPED_TRACE(list.op + " under " + std::string(isa_name(isa)));
      if (list.device == Device::cuda) {
        ++cuda_lists;
        ASSERT_FALSE(list.kernels.empty());
        for (const KernelStatus& k : list.kernels) {
          EXPECT_TRUE(k.name.ends_with("_cuda")) << k.name;
          if (cuda_device_count() == 0) EXPECT_NE(k.declined, "") << k.name;
        }
        continue;
      }
      ASSERT_FALSE(list.kernels.empty());
      const KernelStatus& last = list.kernels.back();
      EXPECT_NE(last.name.find("ref"), std::string::npos) << last.name;
      EXPECT_EQ(last.declined, "");
      int selected = 0;
      std::set<std::string> names;
      for (const KernelStatus& k : list.kernels) {
        selected += k.selected;
        EXPECT_TRUE(names.insert(k.name).second) << "duplicate " << k.name;
        // An entry named for an ISA above the cap is unavailable, with a reason.
        const bool avx512_entry = k.name.find("avx512") != std::string::npos;
        if (avx512_entry && isa < Isa::avx512) EXPECT_NE(k.declined, "") << k.name;
        if (k.name.ends_with("_amx") && isa != Isa::amx) EXPECT_NE(k.declined, "") << k.name;
        if (k.name.find("avx2") != std::string::npos && isa == Isa::ref) EXPECT_NE(k.declined, "") << k.name;
      }
      EXPECT_EQ(selected, 1);
    }
    EXPECT_EQ(cuda_lists, 5);
  }
}

}  // namespace
}  // namespace ampkit
