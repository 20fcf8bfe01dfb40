// Every LayerNorm/RMSNorm kernel of the list vs the reference, on every ISA this machine has:
// every dtype mix, both norms, both passes, with and without gamma/beta, accumulate on and off,
// edge row lengths (tails of 8- and 16-lane vectors), large offsets; plus a bit-exact test on
// dyadic data where every intermediate is exact. Bounds: norm_checks.hpp, docs/NUMERICS.md.
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

#include "ampkit/ops/norm.hpp"
#include "cpu/common/kernel_select.hpp"
#include "cpu/norm/norm_kernels.hpp"
#include "cpu/norm/norm_checks.hpp"  // tests/cpu/norm
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using norm_testing::BackwardCase;
using norm_testing::ForwardCase;
using norm_testing::kMixes;

// Runs body(kernel) for each kernel of the list this machine and AMPKIT_ISA allow, with the ISA
// cap set to the kernel's and the public calls forced onto that kernel; prints why the others are
// skipped.
template <class Body>
void for_each_kernel(Body body) {
  int tested = 0;
  for (const cpu::NormKernel& k : cpu::norm_kernels()) {
    if (!cpu::kernel_usable(k.isa, k.needs_bf16_instructions)) {
      std::printf("[ SKIPPED  ] norm kernel %s: ISA not available on this machine or above "
                  "AMPKIT_ISA\n", k.name);
      continue;
    }
    testing::IsaScope scope(k.isa);
    cpu::ForcedNormKernel forced(k);
    ASSERT_STREQ(norm_kernel_name(false, false, DType::bf16, DType::f32), k.layer_forward_name);
    ASSERT_STREQ(norm_kernel_name(true, true, DType::f16, DType::f16), k.rms_backward_name);
    SCOPED_TRACE(k.name);
    body(k);
    ++tested;
  }
  EXPECT_GE(tested, 1);
}

// Without a forced kernel, the calls pick the first usable entry of the list.
TEST(NormKernels, DispatchPicksTheFirstUsableKernel) {
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    const cpu::NormKernel* first = nullptr;
    for (const cpu::NormKernel& k : cpu::norm_kernels())
      if (first == nullptr && cpu::kernel_usable(k.isa, k.needs_bf16_instructions)) first = &k;
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->isa, isa);
    EXPECT_STREQ(norm_kernel_name(false, true, DType::f32, DType::f32), first->layer_backward_name);
    EXPECT_STREQ(norm_kernel_name(true, false, DType::bf16, DType::bf16), first->rms_forward_name);
  }
}

// The shapes: every row length with 0, 1 and 3 rows; many rows only for a few lengths (and not
// for the reference entry, which is compared with itself: there they only cost time).
std::vector<std::pair<std::int64_t, std::int64_t>> shapes(const cpu::NormKernel& k) {
  std::vector<std::pair<std::int64_t, std::int64_t>> s;
  for (std::int64_t n : {1, 2, 7, 15, 16, 17, 31, 64, 1000, 4096, 12288})
    for (std::int64_t rows : {0, 1, 3}) s.emplace_back(rows, n);
  if (k.isa == Isa::ref) return s;
  for (auto [rows, n] : {std::pair<std::int64_t, std::int64_t>{64, 16}, {64, 17}, {64, 1000},
                         {1000, 7}, {1000, 16}})
    s.emplace_back(rows, n);
  return s;
}

TEST(NormKernels, ForwardMatchesReferenceForEveryDtypeMixAndShape) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  for_each_kernel([&](const cpu::NormKernel& k) {
    for (auto [rows, n] : shapes(k))
      for (norm_testing::Mix mix : kMixes)
        for (bool rms : {false, true})
          for (bool gamma : {false, true})
            for (bool beta : {false, true}) {
              if (rms && beta) continue;
              ForwardCase c;
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
  for_each_kernel([&](const cpu::NormKernel& k) {
    for (auto [rows, n] : shapes(k))
      for (norm_testing::Mix mix : kMixes)
        for (bool rms : {false, true})
          for (bool gamma : {false, true})
            for (bool accumulate : {false, true}) {
              BackwardCase c;
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
  for_each_kernel([&](const cpu::NormKernel&) {
    for (auto [rows, n] : {std::pair<std::int64_t, std::int64_t>{3, 17}, {70, 33}, {5, 1000}})
      for (norm_testing::Mix mix : {kMixes[0], kMixes[2], kMixes[3]})
        for (bool rms : {false, true}) {
          ForwardCase f;
          f.rms = rms;
          f.mix = mix;
          f.rows = rows;
          f.n = n;
          f.stats = false;
          norm_testing::check_forward(f, rng);
          for (int subset = 0; subset < 4; ++subset) {
            BackwardCase c;
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
  for_each_kernel([&](const cpu::NormKernel&) {
    for (std::int64_t n : {64, 1000, 4096}) {
      ForwardCase c;
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
        for (std::int64_t j = 0; j < n; ++j)
          var += (k.x.get(i * n + j) - mu) * (k.x.get(i * n + j) - mu);
        const double r = 1.0 / std::sqrt(var / static_cast<double>(n) + 1e-5);
        for (std::int64_t j = 0; j < n; ++j)
          ASSERT_NEAR(k.y.get(i * n + j), (k.x.get(i * n + j) - mu) * r, 1e-4) << i << ", " << j;
      }
      BackwardCase b;
      b.rows = 4;
      b.n = n;
      b.offset = 1e4;
      norm_testing::check_backward(b, rng);
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
  for_each_kernel([&](const cpu::NormKernel&) {
    for (norm_testing::Mix mix : kMixes)
      for (std::int64_t n : {2, 16, 64, 256}) {
        const std::int64_t rows = 3;
        testing::Buffer x(mix.x, rows * n), y(mix.x, rows * n), gamma(mix.param, n),
            beta(mix.param, n), dy(mix.x, rows * n), dx(mix.x, rows * n), dgamma(mix.param, n),
            dbeta(mix.param, n), mean(DType::f32, rows), rstd(DType::f32, rows);
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
        f.rows = rows;
        f.n = n;
        f.x = {x.data(), mix.x};
        f.gamma = {gamma.data(), mix.param};
        f.beta = {beta.data(), mix.param};
        f.eps = 0.0f;
        f.y = {y.data(), mix.x};
        f.mean = static_cast<float*>(mean.data());
        f.rstd = static_cast<float*>(rstd.data());
        layer_norm_forward(f);
        NormBackwardArgs b;
        b.rows = rows;
        b.n = n;
        b.dy = {dy.data(), mix.x};
        b.x = {x.data(), mix.x};
        b.mean = f.mean;
        b.rstd = f.rstd;
        b.gamma = {gamma.data(), mix.param};
        b.dx = {dx.data(), mix.x};
        b.dgamma = {dgamma.data(), mix.param};
        b.dbeta = {dbeta.data(), mix.param};
        layer_norm_backward(b);
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
            const double e =
                (gamma.get(j) * dy.get(i * n + j) - mean_g - sign[i * n + j] * mean_gx) / d[i];
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
