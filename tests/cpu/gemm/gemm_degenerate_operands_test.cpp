// Degenerate operands. alpha = 0 follows BLAS (docs/DESIGN.md section 3): op(A) op(B) is not
// computed, so Inf and NaN in A or B never reach D, aux or a row-sum bias gradient — D equals the
// same call with k = 0, bit for bit — while BGRADA / BGRADB still sum their operand as given. And a
// leading dimension of an empty or one-column matrix is never used. On every ISA.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

using gemm_test::GemmBuffers;
using gemm_test::GemmCase;

TEST(GemmAlphaZero, TheProductIsNotComputed) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (Epilogue kind : {Epilogue::DEFAULT, Epilogue::BIAS, Epilogue::GELU_AUX_BIAS, Epilogue::DGELU_BGRAD,
                          Epilogue::BGRADA, Epilogue::BGRADB}) {
      for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{33, 20}, {4, 40}}) {
        GemmCase c;
        c.m = m, c.n = n, c.k = 19, c.alpha = 0.0f, c.beta = 0.5f, c.kind = kind;
        c.a = DType::bf16, c.b = DType::f32, c.d = DType::f32;
        GemmBuffers in = gemm_test::make_buffers(c, rng);
        // Inf and NaN in A (B stays finite, so BGRADB has a finite answer).
        in.a.set(0, inf), in.a.set(in.a.size() / 2, nan), in.a.set(in.a.size() - 1, -inf);
        GemmBuffers got = in, no_product = in;
        gemm(got.args());
        GemmArgs k0 = no_product.args();
        k0.k = 0;
        if (kind == Epilogue::BGRADA || kind == Epilogue::BGRADB)
          k0.epilogue.kind = Epilogue::DEFAULT, k0.epilogue.bias_grad = nullptr;
        gemm(k0);
        EXPECT_EQ(got.d.bytes, no_product.d.bytes) << c.describe();
        for (std::int64_t i = 0; i < got.d.size(); ++i) ASSERT_FALSE(std::isnan(got.d.get(i))) << c.describe();
        if (kind == Epilogue::GELU_AUX_BIAS) {
          EXPECT_EQ(got.aux.bytes, no_product.aux.bytes) << c.describe();
        }
        if (kind == Epilogue::DGELU_BGRAD) {
          for (std::int64_t i = 0; i < m; ++i) EXPECT_FALSE(std::isnan(got.bias_grad.get(i))) << c.describe();
        }
        if (kind == Epilogue::BGRADB) {  // the sum of B as given (fp32 blocks of 256), product or not
          for (std::int64_t j = 0; j < n; ++j) {
            double want = 0.0, mag = 0.0;
            for (std::int64_t kk = 0; kk < c.k; ++kk) {
              want += in.b.get(kk + j * in.ldb);
              mag += std::fabs(in.b.get(kk + j * in.ldb));
            }
            EXPECT_NEAR(got.bias_grad.get(j), want, (static_cast<double>(c.k) + 2.0) * 0x1p-24 * mag)
                << "bias_grad(" << j << ") " << c.describe();
          }
        }
        if (kind == Epilogue::BGRADA) {  // A holds Inf and NaN, and BGRADA sums A
          EXPECT_TRUE(std::isnan(got.bias_grad.get(0)) || std::isinf(got.bias_grad.get(0))) << c.describe();
        }
      }
    }
  }
}

// A leading dimension means nothing for a matrix with no element or one column, so the checks
// accept any value there (2^62 included): D and aux must be the same bytes as with the smallest
// ones, and no engine may form a pointer from the huge stride (UBSan caught the skinny engine
// doing so in ArgumentFuzz.Gemm, in CI). On every ISA, both ops, shapes of every engine.
TEST(GemmFreeLeadingDimension, HugeValuesWhereTheyMeanNothingChangeNothing) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  constexpr std::int64_t kHuge = std::int64_t{1} << 62;
  const auto free_ld = [](std::int64_t rows, std::int64_t cols) { return rows == 0 || cols <= 1; };
  const std::int64_t shapes[][3] = {{6, 3, 0}, {40, 33, 0}, {1, 7, 5}, {7, 1, 5}, {6, 3, 1}, {1, 1, 300}, {40, 1, 33}};
  int calls = 0;
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (const auto& [m, n, k] : shapes) {
      for (Op op_a : {Op::N, Op::T}) {
        for (Op op_b : {Op::N, Op::T}) {
          GemmCase c;
          c.m = m, c.n = n, c.k = k, c.beta = 0.5f, c.kind = Epilogue::GELU_AUX_BIAS, c.op_a = op_a, c.op_b = op_b;
          c.a = DType::bf16, c.b = DType::f32, c.d = DType::f32;
          GemmBuffers smallest = gemm_test::make_buffers(c, rng), huge = smallest;
          GemmArgs args = huge.args();
          const bool a_n = op_a == Op::N, b_n = op_b == Op::N;
          int changed = 0;
          if (free_ld(a_n ? m : k, a_n ? k : m)) args.lda = kHuge, ++changed;
          if (free_ld(b_n ? k : n, b_n ? n : k)) args.ldb = kHuge, ++changed;
          if (free_ld(m, n)) args.ldc = args.ldd = args.epilogue.aux_ld = kHuge, ++changed;
          if (changed == 0) continue;  // every matrix of this op pair has two or more columns
          ++calls;
          ASSERT_EQ(gemm_check(args), "") << c.describe();
          gemm(args);
          gemm(smallest.args());
          EXPECT_EQ(huge.d.bytes, smallest.d.bytes) << c.describe();
          EXPECT_EQ(huge.aux.bytes, smallest.aux.bytes) << c.describe();
        }
      }
    }
  }
  EXPECT_GE(calls, 24);
}

}  // namespace
}  // namespace ampkit
