// Every entry of the GEMM kernel list, bit for bit: on small integers (every product and sum
// exactly representable) each kernel must equal the reference and a hand-written triple loop;
// and every kernel gives the same bits with 1 and 2 threads, bias gradients included.
#include <gtest/gtest.h>

#include <random>

#include "ampkit/core/threading.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

using gemm_test::GemmBuffers;
using gemm_test::GemmCase;

// Refills every operand with small integers (products and sums stay exact in fp32 and bf16).
void small_integers(GemmBuffers& t, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> value(-3, 3);
  const auto refill = [&](testing::Buffer& b) {
    for (std::int64_t i = 0; i < b.size(); ++i) b.set(i, value(rng));
  };
  refill(t.a), refill(t.b), refill(t.c), refill(t.bias);
  if (t.problem.aux_in) refill(t.aux);
  if (t.cfg.c_is_d) refill(t.d);
  if (t.cfg.accumulate_bias_grad) refill(t.bias_grad);
}

// Runs one kernel-list entry directly.
void run_kernel(const ops::GemmKernel& kernel, GemmBuffers& t) {
  ops::GemmCounters counters;
  kernel.run(ops::make_gemm_problem(t.args()), counters);
}

TEST(GemmKernels, ReferenceMatchesAHandWrittenLoop) {
  std::mt19937_64 rng(testing::fresh_seed());
  GemmCase c;
  c.m = 5, c.n = 4, c.k = 3, c.op_a = Op::T, c.op_b = Op::N, c.alpha = 2.0f, c.beta = 1.0f;
  c.kind = Epilogue::RELU_AUX_BIAS;
  GemmBuffers t = gemm_test::make_buffers(c, rng);
  small_integers(t, rng);
  const GemmBuffers in = t;
  gemm_test::run_reference(t);
  for (std::int64_t j = 0; j < c.n; ++j)
    for (std::int64_t i = 0; i < c.m; ++i) {
      double x = 0;
      for (std::int64_t kk = 0; kk < c.k; ++kk) x += in.a.get(kk + i * in.lda) * in.b.get(kk + j * in.ldb);
      x = 2 * x + in.c.get(i + j * in.ldc) + in.bias.get(i);
      EXPECT_EQ(t.aux.get(i + j * in.aux_ld), x);
      EXPECT_EQ(t.d.get(i + j * in.ldd), x < 0 ? 0.0 : x);
    }
}

TEST(GemmKernels, EveryKernelIsBitExactOnSmallIntegers) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const Epilogue kinds[] = {Epilogue::DEFAULT,     Epilogue::BIAS,   Epilogue::RELU_AUX_BIAS,
                            Epilogue::DRELU_BGRAD, Epilogue::BGRADA, Epilogue::BGRADB};
  int ran = 0;
  for (const ops::GemmKernel& kernel : cpu::gemm_kernels()) {
    SCOPED_TRACE(kernel.name);
    for (DType t : {DType::f32, DType::bf16, DType::f16}) {
      for (Epilogue kind : kinds) {
        for (int ops = 0; ops < 4; ++ops) {
          GemmCase c;
          c.m = 37 + ops, c.n = 29 - ops, c.k = 41 + 2 * ops;
          c.op_a = ops & 1 ? Op::T : Op::N, c.op_b = ops & 2 ? Op::T : Op::N;
          c.a = c.b = t, c.d = DType::f32, c.c = t;
          c.alpha = 2.0f, c.beta = ops == 3 ? 0.0f : -1.0f;
          c.kind = kind, c.accumulate_bias_grad = ops == 1;
          c.mode = Fp16Mode::alt;  // small integers are exact in bf16: alt changes nothing
          GemmBuffers in = gemm_test::make_buffers(c, rng);
          small_integers(in, rng);
          const ops::GemmProblem problem = ops::make_gemm_problem(in.args());
          if (nullptr != ops::decline_reason(kernel, problem)) continue;
          GemmBuffers got = in, want = in;
          run_kernel(kernel, got);
          gemm_test::run_reference(want);
          ASSERT_EQ(got.d.bytes, want.d.bytes) << c.describe();
          ASSERT_EQ(got.aux.bytes, want.aux.bytes) << c.describe();
          ASSERT_EQ(got.bias_grad.bytes, want.bias_grad.bytes) << c.describe();
          ++ran;
        }
      }
    }
  }
  EXPECT_GT(ran, 0);
}

TEST(GemmKernels, OneAndTwoThreadsGiveTheSameBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (const ops::GemmKernel& kernel : cpu::gemm_kernels()) {
    SCOPED_TRACE(kernel.name);
    for (Epilogue kind : {Epilogue::GELU_AUX_BIAS, Epilogue::DGELU_BGRAD, Epilogue::BGRADA, Epilogue::BGRADB}) {
      GemmCase c;
      c.m = 301, c.n = 203, c.k = 150, c.op_b = Op::T;
      c.a = c.b = DType::bf16, c.d = DType::bf16, c.bias_dtype = DType::f32, c.aux_dtype = DType::bf16;
      c.kind = kind, c.beta = 0.5f, c.c = DType::f32;
      GemmBuffers in = gemm_test::make_buffers(c, rng);
      if (nullptr != ops::decline_reason(kernel, ops::make_gemm_problem(in.args()))) continue;
      GemmBuffers one = in, two = in;
      {
        testing::ThreadsScope threads(1);
        run_kernel(kernel, one);
      }
      {
        testing::ThreadsScope threads(2);
        run_kernel(kernel, two);
      }
      EXPECT_EQ(one.d.bytes, two.d.bytes) << c.describe();
      EXPECT_EQ(one.aux.bytes, two.aux.bytes) << c.describe();
      EXPECT_EQ(one.bias_grad.bytes, two.bias_grad.bytes) << c.describe();
    }
  }
}

TEST(GemmKernels, TheListEndsWithTheReferenceAndNamesSayIsa) {
  const auto kernels = cpu::gemm_kernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_STREQ(kernels.back().name, "gemm_reference");
  EXPECT_EQ(kernels.back().needs.isa, Isa::ref);
  for (const ops::GemmKernel& k : kernels) {
    if (k.needs.isa != Isa::ref) {
      EXPECT_NE(std::string(k.name).find(std::string(isa_name(k.needs.isa))), std::string::npos) << k.name;
    }
  }
}

}  // namespace
}  // namespace ampkit
