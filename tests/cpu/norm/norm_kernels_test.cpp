// Every LayerNorm/RMSNorm kernel of the list vs the reference, on every ISA this machine has:
// every dtype mix, both norms, both passes, with and without gamma/beta, accumulate on and off,
// edge row lengths (tails of 8- and 16-lane vectors), large offsets; plus a bit-exact test on
// dyadic data where every intermediate is exact. Bounds: norm_checks.hpp, docs/NUMERICS.md.
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "ampkit/ops/norm.hpp"
#include "cpu/norm/norm_checks.hpp"  // tests/cpu/norm
#include "cpu/norm/norm_kernels.hpp"
#include "ops/norm/norm_front_end.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using norm_testing::BackwardCase;
using norm_testing::ForwardCase;
using norm_testing::kMixes;

// One position of the four norm kernel lists (layer/rms, forward/backward): the lists are
// parallel, entry i of each needs the same machine.
struct KernelSlot {
  int index;
  const ops::NormForwardEntry& entry;  // layer_norm_fwd_kernels()[index], for name and needs
};

// Runs body(slot) for each position of the lists whose entries this machine and AMPKIT_ISA
// allow, with the ISA cap set to the entry's (the reference then runs under it too); prints why
// the others are skipped. The cases run the entries directly (case.kernel = slot.index).
template <class Body>
void for_each_kernel(Body body) {
  int tested = 0;
  const auto layer_fwd = cpu::layer_norm_fwd_kernels();
  ASSERT_EQ(layer_fwd.size(), cpu::layer_norm_bwd_kernels().size());
  ASSERT_EQ(layer_fwd.size(), cpu::rms_norm_fwd_kernels().size());
  ASSERT_EQ(layer_fwd.size(), cpu::rms_norm_bwd_kernels().size());
  for (std::size_t i = 0; i < layer_fwd.size(); ++i) {
    const ops::NormForwardEntry& k = layer_fwd[i];
    ASSERT_EQ(k.needs.isa, cpu::rms_norm_bwd_kernels()[i].needs.isa);
    if (const char* why = ops::kernel_unavailable_reason(k.needs)) {
      std::printf("[ SKIPPED  ] norm kernel %s: %s\n", k.name, why);
      continue;
    }
    testing::IsaScope scope(k.needs.isa);
    SCOPED_TRACE(k.name);
    body(KernelSlot{static_cast<int>(i), k});
    ++tested;
  }
  EXPECT_GE(tested, 1);
}

// The public calls pick the first usable entry of each list, and the kernel-name and status
// queries say so.
TEST(NormKernels, DispatchPicksTheFirstUsableKernel) {
  testing::Buffer x(DType::bf16, 12), y(DType::bf16, 12), dx(DType::bf16, 12), gamma(DType::f32, 4),
      mean(DType::f32, 3), rstd(DType::f32, 3);
  NormForwardArgs f;
  f.x = TensorView(x.data(), DType::bf16, {3, 4});
  f.y = TensorView(y.data(), DType::bf16, {3, 4});
  f.gamma = TensorView(gamma.data(), DType::f32, {4});
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (NormKind kind : {NormKind::layer, NormKind::rms}) {
      NormBackwardArgs b;
      b.dy = f.y;
      b.x = f.x;
      if (kind == NormKind::layer) b.mean = TensorView(mean.data(), DType::f32, {3});
      b.rstd = TensorView(rstd.data(), DType::f32, {3});
      b.dx = TensorView(dx.data(), DType::bf16, {3, 4});
      const ops::NormForwardEntry* first = nullptr;
      for (const ops::NormForwardEntry& k : ops::norm_forward_kernels(kind))
        if (first == nullptr && ops::kernel_unavailable_reason(k.needs) == nullptr) first = &k;
      ASSERT_NE(first, nullptr);
      EXPECT_EQ(first->needs.isa, isa == Isa::amx ? Isa::avx512 : isa);  // no AMX norm kernels
      EXPECT_STREQ(norm_kernel_name(kind, f), first->name);
      const auto list = ops::norm_forward_kernels(kind);
      const std::vector<KernelStatus> statuses = norm_kernel_statuses(kind, f);
      ASSERT_EQ(statuses.size(), list.size());
      std::size_t selected = list.size();
      for (std::size_t i = 0; i < list.size(); ++i) {
        EXPECT_EQ(statuses[i].name, list[i].name);
        const char* why = ops::kernel_unavailable_reason(list[i].needs);
        EXPECT_EQ(statuses[i].declined, why != nullptr ? why : "") << list[i].name;
        if (statuses[i].selected) {
          EXPECT_EQ(selected, list.size()) << "two entries selected";
          selected = i;
        }
      }
      ASSERT_LT(selected, list.size());
      EXPECT_EQ(statuses[selected].name, first->name);
      EXPECT_STREQ(norm_kernel_name(kind, b), ops::norm_backward_kernels(kind)[selected].name);
    }
  }
}

// The shapes: every row length with 0, 1 and 3 rows; many rows only for a few lengths (and not
// for the reference entry, which is compared with itself: there they only cost time).
std::vector<std::pair<std::int64_t, std::int64_t>> shapes(const KernelSlot& k) {
  std::vector<std::pair<std::int64_t, std::int64_t>> s;
  for (std::int64_t n : {1, 2, 7, 15, 16, 17, 31, 64, 1000, 4096, 12288})
    for (std::int64_t rows : {0, 1, 3}) s.emplace_back(rows, n);
  if (k.entry.needs.isa == Isa::ref) return s;
  for (auto [rows, n] : {std::pair<std::int64_t, std::int64_t>{64, 16}, {64, 17}, {64, 1000}, {1000, 7}, {1000, 16}})
    s.emplace_back(rows, n);
  return s;
}

TEST(NormKernels, ForwardMatchesReferenceForEveryDtypeMixAndShape) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for_each_kernel([&](const KernelSlot& k) {
    for (auto [rows, n] : shapes(k))
      for (norm_testing::Mix mix : kMixes)
        for (bool rms : {false, true})
          for (bool gamma : {false, true})
            for (bool beta : {false, true}) {
              if (rms && beta) continue;
              ForwardCase c;
              c.kernel = k.index;
              c.rms = rms;
              c.mix = mix;
              c.rows = rows;
              c.n = n;
              c.gamma = gamma;
              c.beta = beta;
              c.offset = rms ? 0.5 : 3.0;
              norm_testing::check_forward(c, rng);
              if (::testing::Test::HasFailure()) return;
            }
  });
}

TEST(NormKernels, BackwardMatchesReferenceForEveryDtypeMixAndShape) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for_each_kernel([&](const KernelSlot& k) {
    for (auto [rows, n] : shapes(k))
      for (norm_testing::Mix mix : kMixes)
        for (bool rms : {false, true})
          for (bool gamma : {false, true})
            for (bool accumulate : {false, true}) {
              BackwardCase c;
              c.kernel = k.index;
              c.rms = rms;
              c.mix = mix;
              c.rows = rows;
              c.n = n;
              c.gamma = gamma;
              c.dgamma = gamma;
              c.accumulate = accumulate;
              c.offset = rms ? 0.5 : -2.0;
              norm_testing::check_backward(c, rng);
              if (::testing::Test::HasFailure()) return;
            }
  });
}

// Forward without mean/rstd, backward with every subset of outputs (dx only, dgamma only, dbeta
// only, both parameter gradients without dx).
TEST(NormKernels, OptionalOutputsMatchReferenceAndOthersStayUntouched) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for_each_kernel([&](const KernelSlot& k) {
    for (auto [rows, n] : {std::pair<std::int64_t, std::int64_t>{3, 17}, {70, 33}, {5, 1000}})
      for (norm_testing::Mix mix : {kMixes[0], kMixes[2], kMixes[3]})
        for (bool rms : {false, true}) {
          ForwardCase f;
          f.kernel = k.index;
          f.rms = rms;
          f.mix = mix;
          f.rows = rows;
          f.n = n;
          f.stats = false;
          norm_testing::check_forward(f, rng);
          for (int subset = 0; subset < 4; ++subset) {
            BackwardCase c;
            c.kernel = k.index;
            c.rms = rms;
            c.mix = mix;
            c.rows = rows;
            c.n = n;
            c.dx = subset == 0;
            c.dgamma = subset == 1 || subset == 3;
            c.dbeta = subset == 2 || subset == 3;
            c.accumulate = subset == 3;
            if (rms && subset == 2) continue;  // RMSNorm has no dbeta: nothing requested
            norm_testing::check_backward(c, rng);
          }
          if (::testing::Test::HasFailure()) return;
        }
  });
}

// Rows with mean 1e4 and standard deviation 1 (fp32): a one-pass sum of squares would lose all
// digits of the variance, a mean rounded to fp32 would shift y by up to 5e-4. The bound of
// check_forward is ~4e-5 here; also assert it directly.
TEST(NormKernels, LargeOffsetRowsStayAccurate) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for_each_kernel([&](const KernelSlot& slot) {
    for (std::int64_t n : {64, 1000, 4096}) {
      ForwardCase c;
      c.kernel = slot.index;
      c.rows = 4;
      c.n = n;
      c.gamma = c.beta = false;
      c.offset = 1e4;
      c.stddev = 1.0;
      const norm_testing::ForwardRun k = norm_testing::check_forward(c, rng);
      for (std::int64_t i = 0; i < c.rows; ++i) {
        double mu = 0.0, var = 0.0;
        for (std::int64_t j = 0; j < n; ++j) mu += k.x.get(i * n + j);
        mu /= static_cast<double>(n);
        for (std::int64_t j = 0; j < n; ++j) var += (k.x.get(i * n + j) - mu) * (k.x.get(i * n + j) - mu);
        const double r = 1.0 / std::sqrt(var / static_cast<double>(n) + 1e-5);
        for (std::int64_t j = 0; j < n; ++j)
          ASSERT_NEAR(k.y.get(i * n + j), (k.x.get(i * n + j) - mu) * r, 1e-4) << i << ", " << j;
      }
      BackwardCase b;
      b.kernel = slot.index;
      b.rows = 4;
      b.n = n;
      b.offset = 1e4;
      norm_testing::check_backward(b, rng);
    }
  });
}

// Long LayerNorm rows take their statistics in one pass shifted by the mean of the first 32
// elements, and sum again with a refined shift when that one is off by more than sigma/2. A head
// shifted by 0.45 sigma stays just inside (the worst accepted shift of the bound), one shifted by
// 20 sigma (or 1e3 with offset 1e4) forces the second sum; both must stay within the bounds.
TEST(NormKernels, PoorShiftRowsStayWithinTheBound) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for_each_kernel([&](const KernelSlot& slot) {
    for (std::int64_t n : {65, 100, 1000, 4096})
      for (double head : {0.45, -0.45, 20.0, -1e3})
        for (norm_testing::Mix mix : kMixes) {
          ForwardCase c;
          c.kernel = slot.index;
          c.mix = mix;
          c.rows = 3;
          c.n = n;
          c.offset = head == -1e3 ? 1e4 : 1.5;
          c.head_shift = head;
          norm_testing::check_forward(c, rng);
        }
  });
}

// y and dx of at least the L3's size (norm_stream_min_bytes) go out with non-temporal stores
// when every row starts on a vector boundary (testing::Buffer is 64-byte aligned): the same
// values, so the same bounds. bf16 and f32 x, both norms, 2 threads. Sized from the cache sizes
// the kernels see; where that would take more than 16 MiB per tensor the test skips here and
// runs as the CTest entry `norm_streaming_stores_small_l3` (AMPKIT_CACHES=l3=4M,
// tests/CMakeLists.txt).
TEST(NormKernels, LargeOutputsWrittenWithStreamingStoresMatchReference) {
  const CpuCaches& caches = cpu_features().caches;
  const std::int64_t threshold = caches.l3 > 0 ? caches.l3 : caches.l2;
  if (threshold > (std::int64_t{16} << 20))
    GTEST_SKIP() << "the streaming threshold here is the L3, " << (threshold >> 20)
                 << " MiB: too large a tensor for the suite; checked by the CTest entry "
                    "norm_streaming_stores_small_l3 (AMPKIT_CACHES=l3=4M)";
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  testing::ThreadsScope threads(2);
  for (const norm_testing::Mix mix :
       {norm_testing::Mix{DType::bf16, DType::f32}, norm_testing::Mix{DType::f32, DType::f32}})
    for (bool rms : {false, true}) {  // the selected kernel (AMPKIT_ISA picks it)
      const std::int64_t n = 1024;
      const std::int64_t row_bytes = n * static_cast<std::int64_t>(dtype_size(mix.x));
      const std::int64_t rows = (threshold + row_bytes - 1) / row_bytes + 3;
      ForwardCase f;
      f.mix = mix;
      f.rms = rms;
      f.rows = rows;
      f.n = n;
      f.offset = 1.5;
      norm_testing::check_forward(f, rng);
      BackwardCase b;
      b.mix = mix;
      b.rms = rms;
      b.rows = rows;
      b.n = n;
      norm_testing::check_backward(b, rng);
    }
}

// bf16 and f32 outputs that are subnormal are stored as such, never flushed: the AVX512_BF16
// rounding instructions treat subnormals as zero, and the kernels must redo those lanes (also
// when one vector of a rounded pair has one). Dyadic LayerNorm rows (xhat = +-1 exactly, eps 0)
// with gamma = k * 2^-130 and beta 0 make every y the exact subnormal sign * gamma.
TEST(NormKernels, SubnormalOutputsAreKeptNotFlushed) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for_each_kernel([&](const KernelSlot& k) {
    for (norm_testing::Mix mix : kMixes) {
      if (mix.x == DType::f16 || mix.param == DType::f16) continue;  // 2^-130 is below fp16's range
      for (std::int64_t n : {16, 64, 256, 4096}) {
        const std::int64_t rows = 3;
        testing::Buffer x(mix.x, rows * n), y(mix.x, rows * n), gamma(mix.param, n), beta(mix.param, n);
        std::vector<double> sign(static_cast<std::size_t>(rows * n));
        for (std::int64_t i = 0; i < rows; ++i) {
          std::vector<double> sg(static_cast<std::size_t>(n));
          for (std::int64_t j = 0; j < n; ++j) sg[j] = j < n / 2 ? -1.0 : 1.0;
          std::shuffle(sg.begin(), sg.end(), rng);
          for (std::int64_t j = 0; j < n; ++j) {
            sign[i * n + j] = sg[j];
            x.set(i * n + j, 3.0 + sg[j] * 0.5);
          }
        }
        for (std::int64_t j = 0; j < n; ++j) {
          gamma.set(j, std::ldexp(static_cast<double>(1 + rng() % 3), -130));
          beta.set(j, 0.0);
        }
        y.poison();
        NormForwardArgs f;
        f.x = TensorView(x.data(), mix.x, {rows, n});
        f.gamma = TensorView(gamma.data(), mix.param, {n});
        f.beta = TensorView(beta.data(), mix.param, {n});
        f.eps = 0.0f;
        f.y = TensorView(y.data(), mix.x, {rows, n});
        ops::run_norm_forward(ops::validate_norm_forward("test", NormKind::layer, f),
                              cpu::layer_norm_fwd_kernels()[k.index]);
        for (std::int64_t e = 0; e < rows * n; ++e) {
          const double want = sign[e] * gamma.get(e % n);
          ASSERT_NE(want, 0.0);
          ASSERT_EQ(y.get(e), want) << norm_testing::mix_name(mix) << " n " << n << " element " << e;
        }
      }
    }
  });
}

// Dyadic rows where every intermediate is exact in fp32: half the elements a - d, half a + d
// (d a power of two), eps = 0, so mean = a, rstd = 1/d, xhat = +-1; small-integer gamma, beta,
// dy with power-of-two n. Every kernel must give exactly the mathematical result.
TEST(NormKernels, DyadicDataGivesExactResults) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for_each_kernel([&](const KernelSlot& k) {
    for (norm_testing::Mix mix : kMixes)
      for (std::int64_t n : {2, 16, 64, 256}) {
        const std::int64_t rows = 3;
        testing::Buffer x(mix.x, rows * n), y(mix.x, rows * n), gamma(mix.param, n), beta(mix.param, n),
            dy(mix.x, rows * n), dx(mix.x, rows * n), dgamma(mix.param, n), dbeta(mix.param, n), mean(DType::f32, rows),
            rstd(DType::f32, rows);
        std::vector<double> sign(static_cast<std::size_t>(rows * n)), a(rows), d(rows);
        for (std::int64_t i = 0; i < rows; ++i) {
          a[i] = static_cast<double>(static_cast<int>(rng() % 64) - 32);
          d[i] = std::ldexp(1.0, static_cast<int>(rng() % 4));
          std::vector<double> s(static_cast<std::size_t>(n));
          for (std::int64_t j = 0; j < n; ++j) s[j] = j < n / 2 ? -1.0 : 1.0;
          std::shuffle(s.begin(), s.end(), rng);
          for (std::int64_t j = 0; j < n; ++j) {
            sign[i * n + j] = s[j];
            x.set(i * n + j, a[i] + s[j] * d[i]);
            dy.set(i * n + j, static_cast<double>(static_cast<int>(rng() % 9) - 4));
          }
        }
        for (std::int64_t j = 0; j < n; ++j) {
          gamma.set(j, static_cast<double>(static_cast<int>(rng() % 5) - 2));
          beta.set(j, static_cast<double>(static_cast<int>(rng() % 7) - 3) / 2.0);
        }
        y.poison();
        dx.poison();
        dgamma.poison();
        dbeta.poison();
        NormForwardArgs f;
        f.x = TensorView(x.data(), mix.x, {rows, n});
        f.gamma = TensorView(gamma.data(), mix.param, {n});
        f.beta = TensorView(beta.data(), mix.param, {n});
        f.eps = 0.0f;
        f.y = TensorView(y.data(), mix.x, {rows, n});
        f.mean = TensorView(mean.data(), DType::f32, {rows});
        f.rstd = TensorView(rstd.data(), DType::f32, {rows});
        ops::run_norm_forward(ops::validate_norm_forward("test", NormKind::layer, f),
                              cpu::layer_norm_fwd_kernels()[k.index]);
        NormBackwardArgs b;
        b.dy = TensorView(dy.data(), mix.x, {rows, n});
        b.x = f.x;
        b.mean = f.mean;
        b.rstd = f.rstd;
        b.gamma = f.gamma;
        b.dx = TensorView(dx.data(), mix.x, {rows, n});
        b.dgamma = TensorView(dgamma.data(), mix.param, {n});
        b.dbeta = TensorView(dbeta.data(), mix.param, {n});
        ops::run_norm_backward(ops::validate_norm_backward("test", NormKind::layer, b),
                               cpu::layer_norm_bwd_kernels()[k.index]);
        std::vector<double> want_dgamma(n, 0.0), want_dbeta(n, 0.0);
        for (std::int64_t i = 0; i < rows; ++i) {
          ASSERT_EQ(mean.get(i), a[i]);
          ASSERT_EQ(rstd.get(i), 1.0 / d[i]);
          double mean_g = 0.0, mean_gx = 0.0;
          for (std::int64_t j = 0; j < n; ++j) {
            const double e = sign[i * n + j] * gamma.get(j) + beta.get(j);
            ASSERT_EQ(y.get(i * n + j), e) << norm_testing::mix_name(mix) << " n " << n << " y " << i << "," << j;
            mean_g += gamma.get(j) * dy.get(i * n + j) / static_cast<double>(n);
            mean_gx += gamma.get(j) * dy.get(i * n + j) * sign[i * n + j] / static_cast<double>(n);
            want_dgamma[j] += dy.get(i * n + j) * sign[i * n + j];
            want_dbeta[j] += dy.get(i * n + j);
          }
          for (std::int64_t j = 0; j < n; ++j) {
            const double e = (gamma.get(j) * dy.get(i * n + j) - mean_g - sign[i * n + j] * mean_gx) / d[i];
            testing::Buffer want(mix.x, 1);
            want.set(0, e);  // the exact value rounded once to x's dtype
            ASSERT_EQ(dx.get(i * n + j), want.get(0)) << norm_testing::mix_name(mix) << " n " << n << " dx";
          }
        }
        for (std::int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(dgamma.get(j), want_dgamma[j]) << norm_testing::mix_name(mix) << " n " << n;
          ASSERT_EQ(dbeta.get(j), want_dbeta[j]) << norm_testing::mix_name(mix) << " n " << n;
        }
      }
  });
}

}  // namespace
}  // namespace ampkit
