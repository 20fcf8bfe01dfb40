// The one registry (src/ops/kernel_lists.cpp): every op's list is non-empty, names are unique
// within a list, the last entry of a CPU list is the reference and runs on every machine and
// under every AMPKIT_ISA cap, and an entry is unavailable exactly when the cap or the machine says
// so. The CUDA lists follow, each ending in its reference entry, and without a usable GPU every
// entry says why.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ampkit/device/cpu.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/attention.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "cpu/convert/convert_kernels.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

TEST(KernelLists, EveryListEndsWithARunnableReference) {
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    const std::vector<KernelList> lists = kernel_lists();
    ASSERT_GE(lists.size(), cuda_built() ? 35u : 20u);  // 20 CPU lists, 15 CUDA ones when built
    int cuda_lists = 0;
    for (const KernelList& list : lists) {
      SCOPED_TRACE(list.op + " under " + std::string(isa_name(isa)));
      if (list.device == Device::cuda) {
        ++cuda_lists;
        // At least one entry, then the reference (the CPU reference on host copies), like the
        // CPU lists (src/cuda/common/cuda_reference.hpp).
        ASSERT_GE(list.kernels.size(), 2u);
        EXPECT_TRUE(list.kernels.back().name.ends_with("_ref_cuda")) << list.kernels.back().name;
        for (const KernelStatus& k : list.kernels) {
          EXPECT_TRUE(k.name.ends_with("_cuda")) << k.name;
          if (cuda_device_count() == 0) {
            EXPECT_NE(k.declined, "") << k.name;
          }
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
        if (avx512_entry && isa < Isa::avx512) {
          EXPECT_NE(k.declined, "") << k.name;
        }
        if (k.name.ends_with("_amx") && isa != Isa::amx) {
          EXPECT_NE(k.declined, "") << k.name;
        }
        if (k.name.find("avx2") != std::string::npos && isa == Isa::ref) {
          EXPECT_NE(k.declined, "") << k.name;
        }
      }
      EXPECT_EQ(selected, 1);
    }
    // gemm, the four norms and the nine training-graph ops; a build without the CUDA backend
    // has none (its absent backend's lists are empty).
    EXPECT_EQ(cuda_lists, cuda_built() ? 15 : 0);
  }
}

// set_reference_kernels(true): every op's name query and statuses say the reference, and the
// public call gives the reference's bits; false restores the selection.
TEST(KernelLists, ReferenceKernelsSwitchSelectsTheLastEntry) {
  std::vector<float> x(37), y_fast(37), y_ref(37);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.37f * static_cast<float>(i) - 6.0f;
  const TensorView xv(x.data(), DType::f32, {37});
  const TensorView bf(y_fast.data(), DType::bf16, {37});
  const std::string fast = convert_kernel_name(xv, bf);
  AttentionForwardArgs a;
  std::vector<float> q(2 * 4), out(2 * 4), lse(2);
  a.q = a.k = a.v = TensorView(q.data(), DType::f32, {1, 2, 4});
  a.out = TensorView(out.data(), DType::f32, {1, 2, 4});
  a.lse = TensorView(lse.data(), DType::f32, {1, 1, 2});
  const std::string fast_attention = attention_kernel_name(a);
  set_reference_kernels(true);
  EXPECT_TRUE(reference_kernels());
  EXPECT_STREQ(convert_kernel_name(xv, bf), "convert_ref");
  const std::vector<KernelStatus> statuses = convert_kernel_statuses(xv, bf);
  ASSERT_FALSE(statuses.empty());
  EXPECT_TRUE(statuses.back().selected);
  for (std::size_t i = 0; i + 1 < statuses.size(); ++i) {
    EXPECT_FALSE(statuses[i].selected) << statuses[i].name;
    EXPECT_NE(statuses[i].declined, "") << statuses[i].name;
  }
  EXPECT_STREQ(attention_kernel_name(a), "attention_fwd_reference");
  gelu_forward(xv, TensorView(y_ref.data(), DType::f32, {37}), GeluVariant::tanh);
  set_reference_kernels(false);
  EXPECT_FALSE(reference_kernels());
  EXPECT_EQ(std::string(convert_kernel_name(xv, bf)), fast);
  EXPECT_EQ(std::string(attention_kernel_name(a)), fast_attention);
  EXPECT_NE(fast_attention, "attention_fwd_reference");
  // The reference GELU is within the documented bound of the fast one (and ran: y_ref was written).
  gelu_forward(xv, TensorView(y_fast.data(), DType::f32, {37}), GeluVariant::tanh);
  for (std::size_t i = 0; i < x.size(); ++i)
    EXPECT_NEAR(y_fast[i], y_ref[i], error_bounds::gelu_forward_output(x[i], y_ref[i], DType::f32)) << i;
}

}  // namespace
}  // namespace ampkit
