// Tests of CPU feature detection, the ISA cap and the thread-count setting.
#include "ampkit/device/cpu.hpp"
#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

TEST(Cpu, FeaturesAreConsistent) {
  const CpuFeatures& f = cpu_features();
  if (f.avx512) {
    EXPECT_TRUE(f.avx2);
  }
  if (f.avx512bf16) {
    EXPECT_TRUE(f.avx512);
  }
  if (f.amx_bf16) {
    EXPECT_TRUE(f.avx512bf16);
  }
  EXPECT_EQ(f.best() == Isa::amx, f.amx_bf16);
  EXPECT_LE(static_cast<int>(active_isa()), static_cast<int>(f.best()));
}

TEST(Cpu, CapRejectsWhatTheMachineLacksAndParsesNames) {
  EXPECT_EQ(parse_isa("avx2", "t"), Isa::avx2);
  EXPECT_EQ(parse_isa("amx", "t"), Isa::amx);
  EXPECT_EQ(isa_name(Isa::amx), "amx");
  EXPECT_THROW(parse_isa("sse9", "AMPKIT_ISA"), Error);
  try {
    parse_isa("avx1024", "AMPKIT_ISA");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "AMPKIT_ISA: expected one of ref, avx2, avx512, amx, but got 'avx1024'");
  }
  if (cpu_features().best() < Isa::avx512) {
    EXPECT_THROW(set_isa_cap(Isa::avx512), Error);
  }
  if (cpu_features().best() < Isa::amx) {
    EXPECT_THROW(set_isa_cap(Isa::amx), Error);
  }
  {
    testing::IsaScope scope(Isa::ref);
    EXPECT_EQ(active_isa(), Isa::ref);
    EXPECT_FALSE(bf16_dot_enabled());
  }
}

TEST(Threading, SetAndReject) {
  testing::ThreadsScope scope(2);
  EXPECT_EQ(num_threads(), 2);
  EXPECT_THROW(set_num_threads(0), Error);
  EXPECT_EQ(num_threads(), 2);
}

}  // namespace
}  // namespace ampkit
