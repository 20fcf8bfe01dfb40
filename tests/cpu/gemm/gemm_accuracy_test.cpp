// GEMM accuracy against the double-precision reference on every ISA this machine has: every
// epilogue x every A/B/D dtype combination x op(A)/op(B) on small random shapes, then edge
// shapes (1, tile-1, tile, tile+1, primes, k = 0 and 1, large k, padded leading dimensions).
#include <gtest/gtest.h>

#include <random>

#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

using gemm_test::GemmCase;

constexpr DType kTypes[] = {DType::f32, DType::bf16, DType::f16};
constexpr Epilogue kEpilogues[] = {Epilogue::DEFAULT,  Epilogue::BIAS,          Epilogue::RELU,   Epilogue::RELU_BIAS,
                                   Epilogue::RELU_AUX, Epilogue::RELU_AUX_BIAS, Epilogue::GELU,   Epilogue::GELU_BIAS,
                                   Epilogue::GELU_AUX, Epilogue::GELU_AUX_BIAS, Epilogue::DGELU,  Epilogue::DGELU_BGRAD,
                                   Epilogue::DRELU,    Epilogue::DRELU_BGRAD,   Epilogue::BGRADA, Epilogue::BGRADB};

TEST(GemmAccuracy, EveryEpilogueDtypeAndOpOnEveryIsa) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> coin(0, 1), mn(1, 40), kd(0, 48), three(0, 2);
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(std::string("isa ") + std::string(isa_name(isa)));
    for (DType a : kTypes)
      for (DType b : kTypes)
        for (DType d : kTypes)
          for (Epilogue kind : kEpilogues)
            for (int ops = 0; ops < 4; ++ops) {
              GemmCase c;
              c.op_a = ops & 1 ? Op::T : Op::N;
              c.op_b = ops & 2 ? Op::T : Op::N;
              c.m = mn(rng), c.n = mn(rng), c.k = kd(rng);
              c.a = a, c.b = b, c.d = d, c.c = kTypes[three(rng)];
              c.kind = kind;
              c.alpha = coin(rng) ? 1.0f : -0.75f;
              c.beta = coin(rng) ? 0.0f : 0.5f;
              c.c_is_d = c.beta != 0.0f && coin(rng) && three(rng) == 0;
              c.gelu = coin(rng) ? GeluVariant::tanh : GeluVariant::erf;
              c.bias_dtype = coin(rng) ? DType::f32 : d;
              c.aux_dtype = coin(rng) ? DType::f32 : d;
              c.accumulate_bias_grad = coin(rng);
              c.mode = static_cast<Fp16Mode>(three(rng));
              c.pad = three(rng) == 0 ? 3 : 0;
              gemm_test::run_and_compare(c, rng);
              if (::testing::Test::HasFailure()) return;
            }
  }
}

TEST(GemmAccuracy, EdgeShapesOnEveryIsa) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  // Tiles are 32 x 12 (AVX-512) and 16 x 6 (AVX2); blocks are multiples of those.
  const std::int64_t sizes[] = {1, 2, 5, 6, 7, 11, 12, 13, 15, 16, 17, 31, 32, 33, 97, 131};
  const std::int64_t depths[] = {0, 1, 2, 3, 16, 33, 300};
  std::uniform_int_distribution<int> pick(0, 2), coin(0, 1);
  const struct {
    DType a, b, d;
    Fp16Mode mode;
  } types[] = {{DType::f32, DType::f32, DType::f32, Fp16Mode::exact},
               {DType::bf16, DType::bf16, DType::bf16, Fp16Mode::exact},
               {DType::f16, DType::f16, DType::f16, Fp16Mode::alt},
               {DType::f16, DType::f16, DType::f32, Fp16Mode::exact}};
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(std::string("isa ") + std::string(isa_name(isa)));
    int index = 0;
    for (std::int64_t m : sizes)
      for (std::int64_t n : sizes) {
        GemmCase c;
        const auto& t = types[static_cast<std::size_t>(index++) % 4];
        c.a = t.a, c.b = t.b, c.d = t.d, c.c = t.d, c.mode = t.mode;
        c.m = m, c.n = n, c.k = depths[static_cast<std::size_t>(index) % 7];
        c.op_a = coin(rng) ? Op::T : Op::N;
        c.op_b = coin(rng) ? Op::T : Op::N;
        c.beta = coin(rng) ? 1.0f : 0.0f;
        c.kind = kEpilogues[static_cast<std::size_t>(index * 7) % 16];
        c.bias_dtype = c.aux_dtype = t.d;
        c.pad = pick(rng) == 0 ? 5 : 0;
        gemm_test::run_and_compare(c, rng);
        if (::testing::Test::HasFailure()) return;
      }
  }
}

TEST(GemmAccuracy, LargeKAndMediumShapes) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(std::string("isa ") + std::string(isa_name(isa)));
    for (DType t : kTypes) {
      GemmCase c;
      c.a = c.b = c.d = t;
      c.mode = Fp16Mode::alt;
      c.m = 67, c.n = 45, c.k = 2053;
      c.kind = Epilogue::DGELU_BGRAD;
      c.aux_dtype = c.bias_dtype = DType::f32;
      gemm_test::run_and_compare(c, rng);
      c.m = 150, c.n = 260, c.k = 70, c.op_a = Op::T, c.op_b = Op::T;
      c.kind = Epilogue::GELU_AUX_BIAS;
      gemm_test::run_and_compare(c, rng);
    }
  }
}

}  // namespace
}  // namespace ampkit
