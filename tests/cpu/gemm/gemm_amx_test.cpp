// The AMX entry (gemm_ukernel_bf16_32x32_amx) run directly, whatever the dispatcher would pick:
// edge shapes around its 32 x 32 tile and 32-deep k steps against the reference, 1 and 2
// threads bit for bit, tdpbf16ps's summation order (docs/GEMM.md) and the BGRADB sums taken while
// packing bit for bit (its tanh GELU, every engine's: gemm_gelu_epilogue_test.cpp). Skipped, with
// the reason, where the machine, the ISA cap or the OS rules AMX out.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

using gemm_test::GemmBuffers;
using gemm_test::GemmCase;

const ops::GemmKernel& amx_entry() {
  for (const ops::GemmKernel& k : cpu::gemm_kernels())
    if (std::string(k.name) == "gemm_ukernel_bf16_32x32_amx") return k;
  throw std::logic_error("gemm_ukernel_bf16_32x32_amx is not in the kernel list");
}

void run_entry(GemmBuffers& t) {
  ops::GemmCounters counters;
  amx_entry().run(ops::make_gemm_problem(t.args()), counters);
}

// Why the entry cannot run here (machine, cap, OS permission), or nullptr.
const char* amx_unavailable() { return ops::kernel_unavailable_reason(amx_entry().needs); }

TEST(GemmAmx, DeclinesWhatItCannotTake) {
  GemmArgs g;
  g.a_dtype = g.b_dtype = DType::f32;
  EXPECT_STREQ(amx_entry().declines(ops::make_gemm_problem(g)), "only bf16 operands (bf16, or f16 in the alt mode)");
  g.a_dtype = g.b_dtype = DType::f16;  // exact mode: f16 products are not bf16 products
  EXPECT_NE(amx_entry().declines(ops::make_gemm_problem(g)), nullptr);
  g.fp16_mode = Fp16Mode::alt;
  EXPECT_EQ(amx_entry().declines(ops::make_gemm_problem(g)), nullptr);
  if (active_isa() < Isa::amx) {
    EXPECT_NE(amx_unavailable(), nullptr);
  }
}

TEST(GemmAmx, SaysWhyItCannotRun) {
  if (!cpu_features().amx_bf16) {
    EXPECT_STREQ(amx_unavailable(), "needs AMX-BF16 (amx_bf16, amx_tile), which this machine lacks");
    return;
  }
  // Under AMPKIT_ISA below amx the run is capped already; else cap it here (never raise it).
  testing::IsaScope scope(active_isa() < Isa::amx ? active_isa() : Isa::avx512);
  EXPECT_STREQ(amx_unavailable(), "capped: AMPKIT_ISA / set_isa_cap is below amx");
}

TEST(GemmAmx, EdgeShapesMatchTheReference) {
  if (const char* why = amx_unavailable()) GTEST_SKIP() << "gemm_ukernel_bf16_32x32_amx: " << why;
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const Epilogue kinds[] = {Epilogue::DEFAULT, Epilogue::GELU_AUX_BIAS, Epilogue::DRELU_BGRAD, Epilogue::BGRADB};
  int cases = 0;
  for (std::int64_t m : {1, 17, 31, 32, 33, 70})
    for (std::int64_t n : {1, 16, 32, 33, 65})
      for (std::int64_t k : {0, 1, 2, 31, 32, 33, 97, 545}) {
        ++cases;
        GemmCase c;
        c.m = m, c.n = n, c.k = k;
        c.op_a = cases & 1 ? Op::T : Op::N, c.op_b = cases & 2 ? Op::T : Op::N;
        const bool f16 = cases % 3 == 0;  // f16 operands in the alt mode: rounded while packing
        c.a = c.b = f16 ? DType::f16 : DType::bf16, c.mode = Fp16Mode::alt;
        c.d = cases % 5 == 0 ? DType::f32 : DType::bf16, c.c = DType::f32;
        c.kind = kinds[cases % 4], c.beta = cases % 7 == 0 ? 0.5f : 0.0f, c.alpha = 1.5f;
        c.pad = cases % 4 == 1 ? 5 : 0;
        const GemmBuffers in = gemm_test::make_buffers(c, rng);
        GemmBuffers got = in, want = in;
        run_entry(got);
        gemm_test::run_reference(want);
        gemm_test::expect_close(in, got, want);
        gemm_test::expect_padding_untouched(in, got);
        if (::testing::Test::HasFailure()) return;
      }
}

TEST(GemmAmx, OneAndTwoThreadsGiveTheSameBits) {
  if (const char* why = amx_unavailable()) GTEST_SKIP() << "gemm_ukernel_bf16_32x32_amx: " << why;
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  GemmCase c;
  c.m = 333, c.n = 257, c.k = 700, c.op_a = Op::T;  // k crosses a k block (512)
  c.a = c.b = DType::bf16, c.d = DType::bf16, c.aux_dtype = DType::bf16;
  c.kind = Epilogue::GELU_AUX_BIAS;
  const GemmBuffers in = gemm_test::make_buffers(c, rng);
  GemmBuffers one = in, two = in;
  {
    testing::ThreadsScope threads(1);
    run_entry(one);
  }
  {
    testing::ThreadsScope threads(2);
    run_entry(two);
  }
  EXPECT_EQ(one.d.bytes, two.d.bytes);
  EXPECT_EQ(one.aux.bytes, two.aux.bytes);
}

// BGRADB of a transposed bf16 op(B) (Linear's dW GEMM) is summed while op(B) is packed: the
// same blocks of k in the same order as gemm_operand_sums, which the AVX512_BF16 entry runs, so
// the same bits — across partial slivers, partial k groups and several 256-deep blocks.
TEST(GemmAmx, BgradbSummedWhilePackingHasTheOperandSumsBits) {
  if (const char* why = amx_unavailable()) GTEST_SKIP() << "gemm_ukernel_bf16_32x32_amx: " << why;
  const ops::GemmKernel* avx512bf16 = nullptr;
  for (const ops::GemmKernel& k : cpu::gemm_kernels())
    if (std::string(k.name) == "gemm_ukernel_bf16_32x12_avx512bf16") avx512bf16 = &k;
  ASSERT_NE(avx512bf16, nullptr);
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (std::int64_t n : {2, 33, 300})
    for (std::int64_t k : {2, 33, 600}) {
      GemmCase c;
      c.m = 40, c.n = n, c.k = k, c.op_b = Op::T, c.pad = n == 33 ? 3 : 0;
      c.a = c.b = DType::bf16, c.d = DType::bf16, c.kind = Epilogue::BGRADB;
      c.accumulate_bias_grad = k == 33;
      const GemmBuffers in = gemm_test::make_buffers(c, rng);
      GemmBuffers got = in, sums = in, want = in;
      run_entry(got);
      ops::GemmCounters counters;
      avx512bf16->run(ops::make_gemm_problem(sums.args()), counters);
      for (std::int64_t j = 0; j < n; ++j)
        ASSERT_EQ(got.bias_grad.get(j), sums.bias_grad.get(j)) << "db(" << j << "), " << c.describe();
      gemm_test::run_reference(want);
      gemm_test::expect_close(in, got, want);
    }
}

// Per 32-deep k step (one tdpbf16ps), two fp32 partial sums start at zero: the products of even
// k and those of odd k, each added in k order with one rounding per fused multiply-add; then
// acc += (even + odd). Products of bf16 values are exact in fp32, so fmaf models each step.
// k = 1100 crosses the engine's k blocks (512): the parked sums must continue exactly.
TEST(GemmAmx, SumsInTheOrderOfTdpbf16ps) {
  if (const char* why = amx_unavailable()) GTEST_SKIP() << "gemm_ukernel_bf16_32x32_amx: " << why;
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (std::int64_t k : {75, 1100}) {  // both with a padded last k step
    GemmCase c;
    c.m = 40, c.n = 35, c.k = k;
    c.a = c.b = DType::bf16, c.d = DType::f32;
    GemmBuffers t = gemm_test::make_buffers(c, rng);
    // Magnitudes spread over 2^±8, so that the order shows in the rounding.
    std::uniform_int_distribution<int> shift(-8, 8);
    for (std::int64_t i = 0; i < t.a.size(); ++i) t.a.set(i, t.a.get(i) * std::ldexp(1.0, shift(rng)));
    const GemmBuffers in = t;
    run_entry(t);
    for (std::int64_t j = 0; j < c.n; ++j)
      for (std::int64_t i = 0; i < c.m; ++i) {
        float acc = 0.0f;
        for (std::int64_t k0 = 0; k0 < c.k; k0 += 32) {
          float even = 0.0f, odd = 0.0f;
          for (std::int64_t kk = k0; kk < k0 + 32 && kk < c.k; ++kk) {
            const auto a = static_cast<float>(in.a.get(i + kk * in.lda));
            const auto b = static_cast<float>(in.b.get(kk + j * in.ldb));
            (kk % 2 == 0 ? even : odd) = std::fmaf(a, b, kk % 2 == 0 ? even : odd);
          }
          acc += even + odd;
        }
        const auto got = static_cast<float>(t.d.get(i + j * in.ldd));
        ASSERT_EQ(std::memcmp(&got, &acc, sizeof(float)), 0)
            << "k " << k << ": D(" << i << ", " << j << ") = " << got << ", tdpbf16ps order gives " << acc;
      }
  }
}

}  // namespace
}  // namespace ampkit
