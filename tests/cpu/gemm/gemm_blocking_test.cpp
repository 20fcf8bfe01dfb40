// The cache blocking of the blocked GEMM engines (src/cpu/gemm/gemm_blocking.hpp): every
// kernel-list entry gives the same bytes under any forced block sizes (k blocks of any depth:
// the parked fp32 sums continue in the same k order) and any thread count, across dtypes and
// epilogues (bias gradients too); the derived blocking keeps the rules of docs/GEMM.md.
#include <gtest/gtest.h>

#include <random>

#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/device/cpu.hpp"
#include "cpu/common/cpu_caches.hpp"
#include "cpu/gemm/gemm_blocking.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

using gemm_test::GemmBuffers;
using gemm_test::GemmCase;

// Runs one list entry on t's call, with the blocking derived (forced.kc == 0) or forced.
void run_kernel(const ops::GemmKernel& kernel, GemmBuffers& t, const cpu::GemmBlocking& forced = {0, 0, 0}) {
  ops::GemmProblem problem = ops::make_gemm_problem(t.args());
  problem.forced_kc = forced.kc;
  problem.forced_mc = forced.mc;
  problem.forced_nc = forced.nc;
  ops::GemmCounters counters;
  kernel.run(problem, counters);
}

TEST(GemmBlocking, AnyBlockSizesAndThreadCountsGiveTheSameBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  // kc 1 and 2 round up to the engine's k step (1, 2 or 32); 100000 is one block; 96 leaves
  // blocks of unequal depth.
  const cpu::GemmBlocking blockings[] = {{1, 1, 1},  {2, 2, 3},  {32, 1, 7},
                                         {64, 3, 2}, {96, 5, 1}, {100000, 1000, 1000}};
  const Epilogue kinds[] = {Epilogue::DEFAULT,     Epilogue::GELU_AUX_BIAS, Epilogue::DGELU_BGRAD,
                            Epilogue::DRELU_BGRAD, Epilogue::BGRADA,        Epilogue::BGRADB};
  int compared = 0;
  for (const ops::GemmKernel& kernel : cpu::gemm_kernels()) {
    SCOPED_TRACE(kernel.name);
    for (DType t : {DType::f32, DType::bf16, DType::f16}) {
      for (int ki = 0; ki < 6; ++ki) {
        GemmCase c;
        // k = 197: odd (bf16 pairs), not a multiple of 32 (AMX), several blocks of every forced kc.
        c.m = 67 + ki, c.n = 45 - ki, c.k = 197;
        c.op_a = ki & 1 ? Op::T : Op::N, c.op_b = ki & 2 ? Op::T : Op::N;
        c.a = c.b = t, c.d = ki & 1 ? DType::bf16 : DType::f32, c.c = DType::f32;
        c.aux_dtype = c.d, c.bias_dtype = DType::f32;
        c.alpha = ki == 2 ? 0.5f : 1.0f, c.beta = ki & 1 ? 0.25f : 0.0f;
        c.kind = kinds[ki], c.accumulate_bias_grad = ki == 3;
        c.mode = ki & 1 ? Fp16Mode::alt : Fp16Mode::exact;
        GemmBuffers in = gemm_test::make_buffers(c, rng);
        if (nullptr != ops::decline_reason(kernel, ops::make_gemm_problem(in.args()))) continue;
        GemmBuffers want = in;
        run_kernel(kernel, want);  // the derived blocking
        for (const cpu::GemmBlocking& b : blockings) {
          for (int threads : {1, 2}) {
            SCOPED_TRACE(::testing::Message() << "kc " << b.kc << " mc " << b.mc << " nc " << b.nc << " threads "
                                              << threads << " " << c.describe());
            GemmBuffers got = in;
            {
              testing::ThreadsScope scope(threads);
              run_kernel(kernel, got, b);
            }
            ASSERT_EQ(got.d.bytes, want.d.bytes);
            ASSERT_EQ(got.aux.bytes, want.aux.bytes);
            ASSERT_EQ(got.bias_grad.bytes, want.bias_grad.bytes);
            ++compared;
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 0);
}

// The derived blocking against the caches it came from (docs/GEMM.md, "Blocking").
TEST(GemmBlocking, DerivedBlocksFollowTheCacheRules) {
  const CpuCaches& c = cpu_features().caches;
  ASSERT_GE(c.l1d, 4096);
  ASSERT_GE(c.l2, c.l1d);
  const cpu::GemmTileShape shapes[] = {
      {32, 12, 4, 1, true}, {32, 12, 4, 1}, {16, 6, 4, 1}, {32, 12, 2, 2}, {32, 32, 2, 32}};
  for (const cpu::GemmTileShape& s : shapes) {
    SCOPED_TRACE(::testing::Message() << "mr " << s.mr << " nr " << s.nr << " k step " << s.k_step << " tiles in L3 "
                                      << s.tiles_in_l3);
    const cpu::GemmBlocking b = cpu::gemm_blocking(s);
    EXPECT_EQ(b.kc % s.k_step, 0);
    EXPECT_GE(b.kc, 64);
    EXPECT_GE(b.mc, 1);
    EXPECT_GE(b.nc, 1);
    // Both slivers of a block in half of L1d (unless at the 64-deep floor).
    if (b.kc > 64) {
      EXPECT_LE((s.mr + s.nr) * b.kc * s.packed_bytes, c.l1d / 2);
    }
    // The MC x kc block of A in half of L2, its parked tiles in a quarter (of the L3 share with
    // tiles_in_l3), NC x kc of B in half of the L3 share.
    const std::int64_t l2 = c.l2 / (c.l2_sharing > 1 ? 2 : 1);
    const std::int64_t l3 = c.l3 > 0 ? c.l3 / (c.l3_sharing > 0 ? c.l3_sharing : 1) : c.l2;
    EXPECT_LE(b.mc * b.nc * s.mr * s.nr * 4,
              std::max<std::int64_t>((s.tiles_in_l3 ? l3 : l2) / 4, 4 * s.mr * s.nr * 4));
    if (b.mc > 1) {
      EXPECT_LE(b.mc * s.mr * b.kc * s.packed_bytes, l2 / 2);
    }
    if (b.nc > 1 && c.l3 > 0) {
      EXPECT_LE(b.nc * s.nr * b.kc * s.packed_bytes, c.l3 / c.l3_sharing / 2);
    }
  }
}

TEST(GemmBlocking, ForcedKcIsRoundedToTheKStep) {
  const cpu::GemmBlocking f{5, 2, 3};
  const cpu::GemmBlocking a = cpu::gemm_blocking({32, 32, 2, 32}, f);
  EXPECT_EQ(a.kc, 32);
  const cpu::GemmBlocking b = cpu::gemm_blocking({32, 12, 2, 2}, f);
  EXPECT_EQ(b.kc, 6);
  EXPECT_EQ(b.mc, 2);
  EXPECT_EQ(b.nc, 3);
}

TEST(CpuCaches, OverrideParsesSizesAndRejectsGarbage) {
  CpuCaches c;
  apply_cache_override("l1d=48K,l2=2M,l3=105M", c);
  EXPECT_EQ(c.l1d, 48 * 1024);
  EXPECT_EQ(c.l2, 2 * 1024 * 1024);
  EXPECT_EQ(c.l3, 105 * 1024 * 1024);
  EXPECT_STREQ(c.source, "AMPKIT_CACHES");
  apply_cache_override("l2=1048576", c);
  EXPECT_EQ(c.l2, 1024 * 1024);
  EXPECT_EQ(c.l1d, 48 * 1024);
  for (const char* bad : {"l1=48K", "l1d=", "l1d=0", "l1d=48Q", "l1d=48K;l2=1M", "l1d=-4", "l3=999999999999G"}) {
    CpuCaches d;
    try {
      apply_cache_override(bad, d);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("AMPKIT_CACHES"), std::string::npos) << e.what();
      EXPECT_EQ(d.l1d, CpuCaches{}.l1d);  // untouched
    }
  }
}

}  // namespace
}  // namespace ampkit
