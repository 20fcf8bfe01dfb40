// LayerNorm/RMSNorm results are bitwise independent of the thread count (kernels layer tests):
// forward and backward, dgamma/dbeta included, with enough rows for many 32-row blocks and
// enough work to open the parallel region; every fast entry of the kernel lists this machine
// can run, called directly (the reference is sequential).
#include <cstdio>
#include <random>

#include "ampkit/ops/norm.hpp"
#include "cpu/norm/norm_checks.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

TEST(NormThreads, OneTwoAndThreeThreadsGiveIdenticalBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  const auto list = cpu::layer_norm_fwd_kernels();  // the four lists are parallel
  for (std::size_t index = 0; index < list.size(); ++index) {
    const ops::NormForwardEntry& k = list[index];
    if (k.needs.isa == Isa::ref) continue;  // the reference is sequential
    if (const char* why = ops::kernel_unavailable_reason(k.needs)) {
      std::printf("[ SKIPPED  ] norm kernel %s: %s\n", k.name, why);
      continue;
    }
    testing::IsaScope isa_scope(k.needs.isa);
    SCOPED_TRACE(k.name);
    for (norm_testing::Mix mix : {norm_testing::kMixes[0], norm_testing::kMixes[2]})
      for (bool rms : {false, true})
        // (549, 4096): 18 blocks of 32 rows whose partials (32 KiB each) fill a wave at 8
        // blocks, so the backward adds them into the totals in three waves.
        for (auto [rows, n] : {std::pair<std::int64_t, std::int64_t>{300, 256}, {2051, 33}, {549, 4096}}) {
          norm_testing::ForwardCase f;
          f.rms = rms;
          f.mix = mix;
          f.rows = rows;
          f.n = n;
          f.kernel = static_cast<int>(index);
          norm_testing::BackwardCase b;
          b.rms = rms;
          b.mix = mix;
          b.rows = rows;
          b.n = n;
          b.accumulate = true;
          b.kernel = static_cast<int>(index);
          norm_testing::ForwardRun f1;
          norm_testing::BackwardRun b1;
          for (int threads : {1, 2, 3}) {
            testing::ThreadsScope threads_scope(threads);
            SCOPED_TRACE(::testing::Message() << threads << " threads");
            std::mt19937_64 rng(seed);  // same inputs for every thread count
            // The parallel path is checked against the reference once (2 threads); the other
            // thread counts must give the same bits.
            const norm_testing::ForwardRun fk = norm_testing::check_forward(f, rng, threads == 2);
            const norm_testing::BackwardRun bk = norm_testing::check_backward(b, rng, threads == 2);
            if (threads == 1) {
              f1 = fk;
              b1 = bk;
              continue;
            }
            EXPECT_TRUE(norm_testing::same_bytes("y", fk.y, f1.y));
            EXPECT_TRUE(norm_testing::same_bytes("mean", fk.mean, f1.mean));
            EXPECT_TRUE(norm_testing::same_bytes("rstd", fk.rstd, f1.rstd));
            EXPECT_TRUE(norm_testing::same_bytes("dx", bk.dx, b1.dx));
            EXPECT_TRUE(norm_testing::same_bytes("dgamma", bk.dgamma, b1.dgamma));
            EXPECT_TRUE(norm_testing::same_bytes("dbeta", bk.dbeta, b1.dbeta));
          }
          if (::testing::Test::HasFailure()) return;
        }
  }
}

}  // namespace
}  // namespace ampkit
