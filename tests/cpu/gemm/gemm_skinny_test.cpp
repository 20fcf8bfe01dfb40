// The skinny GEMM engines (gemm_skinny_f32_*: 1 <= min(m, n) <= 16), run directly from the kernel
// list: every epilogue x dtype x op(A)/op(B) in both orientations (m small / n small) against the
// reference, edge shapes (small side 1..16, k = 0, 1, primes, across the k blocks and the
// row blocks, padded leading dimensions), k split in chunks and the BGRADA/BGRADB sums taken in the
// pass over W (every epilogue, dtype and fp16 mode; the axpy form's sums with gemm_operand_sums'
// bits), bit-exactness on small integers, 1 vs 2 vs 3 threads bitwise (split k included), the
// fp16 modes (alt = bf16-rounded operands, flush counts and zeroes) and dispatch.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "cpu/gemm/gemm_kernels.hpp"
#include "cpu/gemm/gemm_output.hpp"
#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

using gemm_test::GemmBuffers;
using gemm_test::GemmCase;

constexpr DType kTypes[] = {DType::f32, DType::bf16, DType::f16};

// The skinny entries of the kernel list this machine can run (at least one on x86-64 with AVX2).
std::vector<const ops::GemmKernel*> skinny_kernels() {
  std::vector<const ops::GemmKernel*> out;
  for (const ops::GemmKernel& k : cpu::gemm_kernels())
    if (k.declines == cpu::gemm_skinny_declines && ops::kernel_unavailable_reason(k.needs) == nullptr)
      out.push_back(&k);
  return out;
}

GemmReport run_kernel(const ops::GemmKernel& kernel, GemmBuffers& t) {
  ops::GemmCounters counters;
  const ops::GemmProblem p = ops::make_gemm_problem(t.args());
  EXPECT_TRUE(nullptr == ops::decline_reason(kernel, p)) << t.cfg.describe();
  kernel.run(p, counters);
  GemmReport r;
  r.fp16_subnormal_inputs = counters.fp16_subnormal_inputs;
  r.fp16_subnormal_outputs = counters.fp16_subnormal_outputs;
  return r;
}

// Runs one skinny entry and the reference on copies of one random problem; checks every output.
void compare(const ops::GemmKernel& kernel, const GemmCase& cfg, std::mt19937_64& rng) {
  const GemmBuffers inputs = gemm_test::make_buffers(cfg, rng);
  GemmBuffers got = inputs, want = inputs;
  const GemmReport report = run_kernel(kernel, got);
  const GemmReport ref = gemm_test::run_reference(want);
  gemm_test::expect_close(inputs, got, want);
  gemm_test::expect_padding_untouched(inputs, got);
  EXPECT_EQ(report.fp16_subnormal_inputs, ref.fp16_subnormal_inputs) << cfg.describe();
}

TEST(GemmSkinny, EveryEpilogueDtypeAndOpInBothOrientations) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> coin(0, 1), small(1, 16), large(1, 70), kd(0, 90), three(0, 2);
  const auto kernels = skinny_kernels();
  ASSERT_EQ(kernels.empty(),
            ops::kernel_unavailable_reason({Device::cpu, Isa::avx2, false}) != nullptr);  // none under AMPKIT_ISA=ref
  for (const ops::GemmKernel* kernel : kernels) {
    SCOPED_TRACE(kernel->name);
    for (int kind = 0; kind <= static_cast<int>(Epilogue::BGRADB); ++kind)
      for (DType a : kTypes)
        for (DType b : kTypes)
          for (int ops = 0; ops < 8; ++ops) {
            GemmCase c;
            c.op_a = ops & 1 ? Op::T : Op::N;
            c.op_b = ops & 2 ? Op::T : Op::N;
            const bool n_small = ops & 4;
            c.m = n_small ? large(rng) : small(rng);
            c.n = n_small ? small(rng) : large(rng);
            c.k = kd(rng);
            c.a = a, c.b = b, c.d = kTypes[three(rng)], c.c = kTypes[three(rng)];
            c.kind = static_cast<Epilogue>(kind);
            c.alpha = coin(rng) ? 1.0f : -0.75f;
            c.beta = coin(rng) ? 0.0f : 0.5f;
            c.c_is_d = c.beta != 0.0f && three(rng) == 0;
            c.gelu = coin(rng) ? GeluVariant::tanh : GeluVariant::erf;
            c.bias_dtype = coin(rng) ? DType::f32 : c.d;
            c.aux_dtype = coin(rng) ? DType::f32 : c.d;
            c.accumulate_bias_grad = coin(rng);
            c.mode = static_cast<Fp16Mode>(three(rng));
            c.pad = three(rng) == 0 ? 3 : 0;
            compare(*kernel, c, rng);
            if (::testing::Test::HasFailure()) return;
          }
  }
}

TEST(GemmSkinny, EdgeShapes) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  // Row blocks are 128 (dot form, few rows) to 512 rows of the large side, the dot form takes 32
  // rows at a time; k blocks are 16 (axpy form) and 4096 / (small columns, rounded up to a power
  // of two) (dot form).
  const std::int64_t larges[] = {1, 15, 16, 17, 31, 32, 33, 127, 129, 257, 513};
  const std::int64_t depths[] = {0, 1, 2, 3, 5, 16, 17, 31, 97, 255, 256, 257, 521};
  std::uniform_int_distribution<int> coin(0, 1), pick(0, 2), kind(0, static_cast<int>(Epilogue::BGRADB));
  for (const ops::GemmKernel* kernel : skinny_kernels()) {
    SCOPED_TRACE(kernel->name);
    int index = 0;
    for (std::int64_t s = 1; s <= 16; ++s)
      for (std::int64_t l : larges) {
        if (l < s) continue;
        GemmCase c;
        const bool n_small = (index & 1) != 0;
        c.m = n_small ? l : s, c.n = n_small ? s : l;
        c.k = depths[static_cast<std::size_t>(index++) % 13];
        c.a = kTypes[static_cast<std::size_t>(index) % 3], c.b = kTypes[static_cast<std::size_t>(index / 3) % 3];
        c.d = c.c = kTypes[pick(rng)];
        c.mode = static_cast<Fp16Mode>(pick(rng));
        c.op_a = coin(rng) ? Op::T : Op::N;
        c.op_b = coin(rng) ? Op::T : Op::N;
        c.beta = coin(rng) ? 1.0f : 0.0f;
        c.kind = static_cast<Epilogue>(kind(rng));
        c.bias_dtype = c.aux_dtype = c.d;
        c.pad = pick(rng) == 0 ? 5 : 0;
        compare(*kernel, c, rng);
        if (::testing::Test::HasFailure()) return;
      }
    // Several column groups (4 columns per group) with sums parked between k blocks, every op.
    for (std::int64_t s : {9, 16})
      for (int ops = 0; ops < 8; ++ops) {
        GemmCase c;
        c.m = ops & 4 ? 70 : s, c.n = ops & 4 ? s : 70, c.k = 600;
        c.op_a = ops & 1 ? Op::T : Op::N, c.op_b = ops & 2 ? Op::T : Op::N;
        c.kind = Epilogue::DGELU_BGRAD, c.a = DType::f16, c.b = DType::bf16, c.mode = Fp16Mode::flush;
        compare(*kernel, c, rng);
        if (::testing::Test::HasFailure()) return;
      }
  }
}

TEST(GemmSkinny, BitExactOnSmallIntegers) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> value(-3, 3);
  for (const ops::GemmKernel* kernel : skinny_kernels()) {
    SCOPED_TRACE(kernel->name);
    for (DType t : kTypes)
      for (Epilogue kind :
           {Epilogue::BIAS, Epilogue::RELU_AUX_BIAS, Epilogue::DRELU_BGRAD, Epilogue::BGRADA, Epilogue::BGRADB})
        for (int ops = 0; ops < 8; ++ops) {
          GemmCase c;
          c.m = ops & 4 ? 141 : 3 + ops, c.n = ops & 4 ? 9 + ops : 133, c.k = 61 + ops;
          c.op_a = ops & 1 ? Op::T : Op::N, c.op_b = ops & 2 ? Op::T : Op::N;
          c.a = c.b = c.c = t, c.d = DType::f32, c.alpha = 2.0f, c.beta = -1.0f;
          c.kind = kind, c.accumulate_bias_grad = (ops & 1) != 0, c.mode = Fp16Mode::alt;
          GemmBuffers in = gemm_test::make_buffers(c, rng);
          const auto refill = [&](testing::Buffer& b) {
            for (std::int64_t i = 0; i < b.size(); ++i) b.set(i, value(rng));
          };
          refill(in.a), refill(in.b), refill(in.c), refill(in.bias);
          if (in.problem.aux_in) refill(in.aux);
          if (c.accumulate_bias_grad) refill(in.bias_grad);
          GemmBuffers got = in, want = in;
          run_kernel(*kernel, got);
          gemm_test::run_reference(want);
          ASSERT_EQ(got.d.bytes, want.d.bytes) << c.describe();
          ASSERT_EQ(got.aux.bytes, want.aux.bytes) << c.describe();
          ASSERT_EQ(got.bias_grad.bytes, want.bias_grad.bytes) << c.describe();
        }
  }
}

TEST(GemmSkinny, OneTwoAndThreeThreadsGiveTheSameBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  struct Shape {
    std::int64_t large, small, k;
  };
  // 1100 x 150: 9 row blocks of 128 (dot form) or 3 of 512 (axpy form), k whole; 300 x 5000:
  // 3 blocks of 128 (dot) or 1 of 512 (axpy), k split in 4 chunks of 1280; 40 x 9000: one block,
  // k split in 8 chunks of 1280.
  const Shape shapes[] = {{1100, 7, 150}, {300, 5, 5000}, {40, 16, 9000}};
  for (const ops::GemmKernel* kernel : skinny_kernels()) {
    SCOPED_TRACE(kernel->name);
    // aux out, aux in with row sums, operand sums of W (BGRADA when n is small, BGRADB when m is)
    // and of the small operand (the other one).
    for (Epilogue kind : {Epilogue::GELU_AUX_BIAS, Epilogue::DGELU_BGRAD, Epilogue::BGRADA, Epilogue::BGRADB})
      for (const Shape& shape : shapes)
        for (int ops = 0; ops < 8; ++ops) {
          GemmCase c;
          const bool n_small = ops & 4;
          c.m = n_small ? shape.large : shape.small, c.n = n_small ? shape.small : shape.large, c.k = shape.k;
          c.op_a = ops & 1 ? Op::T : Op::N, c.op_b = ops & 2 ? Op::T : Op::N;
          c.a = DType::bf16, c.b = DType::f16, c.d = DType::bf16, c.bias_dtype = DType::f32;
          c.aux_dtype = DType::bf16, c.kind = kind, c.beta = 0.5f, c.c = DType::f32;
          const GemmBuffers in = gemm_test::make_buffers(c, rng);
          GemmBuffers one = in;
          {
            testing::ThreadsScope threads(1);
            run_kernel(*kernel, one);
          }
          for (int t : {2, 3}) {
            GemmBuffers many = in;
            {
              testing::ThreadsScope threads(t);
              run_kernel(*kernel, many);
            }
            EXPECT_EQ(one.d.bytes, many.d.bytes) << t << " threads, " << c.describe();
            EXPECT_EQ(one.aux.bytes, many.aux.bytes) << t << " threads, " << c.describe();
            EXPECT_EQ(one.bias_grad.bytes, many.bias_grad.bytes) << t << " threads, " << c.describe();
          }
        }
  }
}

// k split in chunks (few rows of the large operand, k >= 2048) and the operand sums taken in the
// pass over W across several sum blocks of 256: every epilogue, every dtype (f16 in each mode),
// every op combination, both orientations, against the reference.
TEST(GemmSkinny, SplitKAndFusedOperandSumsAgainstTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> small(1, 16), large(1, 140), deep(2048, 6000), coin(0, 1), three(0, 2);
  struct TypeMode {
    DType t;
    Fp16Mode mode;
  };
  const TypeMode types[] = {{DType::f32, Fp16Mode::exact},
                            {DType::bf16, Fp16Mode::exact},
                            {DType::f16, Fp16Mode::exact},
                            {DType::f16, Fp16Mode::flush},
                            {DType::f16, Fp16Mode::alt}};
  for (const ops::GemmKernel* kernel : skinny_kernels()) {
    SCOPED_TRACE(kernel->name);
    int index = 0;
    for (const TypeMode& tm : types)
      for (int ops = 0; ops < 8; ++ops)
        for (int twice = 0; twice < 2; ++twice) {
          GemmCase c;
          const bool n_small = ops & 4;
          c.m = n_small ? large(rng) : small(rng), c.n = n_small ? small(rng) : large(rng);
          c.k = index % 3 == 0 ? 257 + 256 * three(rng) : deep(rng);  // several sum blocks, or split too
          c.op_a = ops & 1 ? Op::T : Op::N, c.op_b = ops & 2 ? Op::T : Op::N;
          c.a = tm.t, c.b = kTypes[three(rng)], c.mode = tm.mode;
          if (coin(rng)) std::swap(c.a, c.b);
          c.d = c.c = kTypes[three(rng)];
          // Every epilogue in turn, the operand sums (the last two) on every third case.
          c.kind = index % 3 == 2 ? (coin(rng) ? Epilogue::BGRADA : Epilogue::BGRADB)
                                  : static_cast<Epilogue>(index % (static_cast<int>(Epilogue::BGRADB) + 1));
          ++index;
          c.beta = coin(rng) ? 0.0f : 0.5f;
          c.gelu = coin(rng) ? GeluVariant::tanh : GeluVariant::erf;
          c.bias_dtype = coin(rng) ? DType::f32 : c.d;
          c.aux_dtype = c.d;
          c.accumulate_bias_grad = coin(rng);
          c.pad = three(rng) == 0 ? 3 : 0;
          compare(*kernel, c, rng);
          if (::testing::Test::HasFailure()) return;
        }
  }
}

// Where W is contiguous along its rows (op(A) = N with n small: BGRADA; op(B) = T with m small:
// BGRADB), the sums taken in the pass over W have gemm_operand_sums' bits (the same fp32 chain per
// row within each block of 256, the blocks added in double), also when k is split.
TEST(GemmSkinny, FusedAxpySumsHaveTheOperandSumsBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (const ops::GemmKernel* kernel : skinny_kernels()) {
    SCOPED_TRACE(kernel->name);
    for (DType t : kTypes)
      for (const bool n_small : {true, false})
        for (const std::int64_t k : {1, 255, 256, 700, 4100}) {
          GemmCase c;
          c.m = n_small ? 333 : 5, c.n = n_small ? 3 : 290, c.k = k;
          c.op_a = Op::N, c.op_b = Op::T;
          c.a = c.b = t, c.d = DType::f32, c.bias_dtype = DType::f32;
          c.kind = n_small ? Epilogue::BGRADA : Epilogue::BGRADB, c.mode = Fp16Mode::flush;
          GemmBuffers got = gemm_test::make_buffers(c, rng);
          run_kernel(*kernel, got);
          const ops::GemmProblem p = ops::make_gemm_problem(got.args());
          std::vector<double> sums(static_cast<std::size_t>(n_small ? c.m : c.n));
          cpu::gemm_operand_sums(p, sums.data());
          for (std::size_t r = 0; r < sums.size(); ++r)
            ASSERT_EQ(got.bias_grad.get(static_cast<std::int64_t>(r)), static_cast<double>(static_cast<float>(sums[r])))
                << "row " << r << ", " << c.describe();
        }
  }
}

TEST(GemmSkinny, AltEqualsBf16RoundedOperandsAndFlushZeroesSubnormals) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> which(0, 9), mantissa(1, 1023);
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(std::string("isa ") + std::string(isa_name(isa)));
    for (int ops = 0; ops < 8; ++ops) {
      GemmCase c;
      const bool n_small = ops & 4;
      c.m = n_small ? 77 : 3, c.n = n_small ? 2 : 69, c.k = 61;
      c.op_a = ops & 1 ? Op::T : Op::N, c.op_b = ops & 2 ? Op::T : Op::N;
      c.a = c.b = c.d = c.bias_dtype = c.aux_dtype = DType::f16;
      c.kind = Epilogue::GELU_AUX_BIAS, c.mode = Fp16Mode::alt;
      GemmBuffers in = gemm_test::make_buffers(c, rng);
      // alt: the same bits as the same call on the operands rounded to bf16 and given as bf16.
      GemmBuffers rounded = gemm_test::with_operands_as_bf16(in);
      GemmBuffers alt = in;
      GemmReport report;
      gemm(alt.args(), &report);
      gemm(rounded.args());
      EXPECT_EQ(alt.d.bytes, rounded.d.bytes) << c.describe();
      EXPECT_EQ(alt.aux.bytes, rounded.aux.bytes) << c.describe();
      // flush: planted f16 subnormals in both operands (the streamed one and the packed one)
      // count and read as zero: the same bits as zeros in their place.
      c.kind = Epilogue::BGRADA, c.mode = Fp16Mode::flush, c.d = c.bias_dtype = DType::f32;
      in = gemm_test::make_buffers(c, rng);
      for (testing::Buffer* buf : {&in.a, &in.b})
        for (std::int64_t i = 0; i < buf->size(); ++i)
          if (std::fabs(buf->get(i)) < 0x1p-14) buf->set(i, 0.5);
      GemmBuffers zeroed = in;
      std::int64_t planted = 0;
      for (int which_operand = 0; which_operand < 2; ++which_operand) {
        testing::Buffer& buf = which_operand == 0 ? in.a : in.b;
        testing::Buffer& zero = which_operand == 0 ? zeroed.a : zeroed.b;
        for (std::int64_t i = 0; i < buf.size(); ++i) {
          if (which(rng) != 0) continue;
          buf.set(i, (which(rng) < 5 ? -1 : 1) * std::ldexp(mantissa(rng), -24));
          zero.set(i, 0.0);
          ++planted;
        }
      }
      GemmBuffers flushed = in;
      gemm(flushed.args(), &report);
      EXPECT_EQ(report.fp16_subnormal_inputs, planted) << c.describe();
      gemm(zeroed.args());
      EXPECT_EQ(flushed.d.bytes, zeroed.d.bytes) << c.describe();
      GemmBuffers exact = in;  // BGRADA sums A as given: the exact mode's bias gradient
      exact.cfg.mode = Fp16Mode::exact;
      gemm(exact.args());
      EXPECT_EQ(flushed.bias_grad.bytes, exact.bias_grad.bytes) << c.describe();
    }
  }
}

TEST(GemmSkinny, DispatchTakesTheSkinnyEngineUpToSixteen) {
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    const std::string expected = isa == Isa::ref   ? "gemm_reference"
                                 : isa == Isa::amx ? "gemm_skinny_f32_avx512"  // the skinny engines are AVX-512 at most
                                                   : std::string("gemm_skinny_f32_") + std::string(isa_name(isa));
    for (std::int64_t small : {1, 7, 16, 17}) {
      for (bool n_small : {true, false}) {
        GemmArgs g;
        g.m = n_small ? 512 : small, g.n = n_small ? small : 512, g.k = 64;
        std::vector<std::uint16_t> a(static_cast<std::size_t>(g.m * g.k)), b(static_cast<std::size_t>(g.k * g.n));
        std::vector<float> d(static_cast<std::size_t>(g.m * g.n));
        g.a = a.data(), g.b = b.data(), g.d = d.data();
        g.lda = g.m, g.ldb = g.k, g.ldd = g.m;
        g.a_dtype = g.b_dtype = DType::bf16;
        const std::string name = gemm_kernel_name(g);
        if (small <= 16)
          EXPECT_EQ(name, expected) << small;
        else
          EXPECT_EQ(name.find("skinny"), std::string::npos) << small;
      }
    }
  }
}

}  // namespace
}  // namespace ampkit
