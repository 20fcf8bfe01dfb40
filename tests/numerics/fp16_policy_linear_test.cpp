// Policy-level tests of the Linear layer: the caller resolves the mode with gemm_fp16_mode() on
// its thread and hands it to linear_forward / linear_backward (as the graph executor does), for
// every row of the DESIGN.md table (env x pass x device model); the numbers must follow the mode.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/layers/linear.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "numerics/policy_test_support.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;
using testing::kGemmEnv;
using testing::kModelEnv;
using testing::PolicyEnvScope;

// The probe of fp16_policy_gemm_test.cpp along a reduction of length 64: the first 32 terms
// (1 + 2^-9) * s, the last 32 terms 2^-20 * 1024 s (an fp16 subnormal times 1024 s). Sum / s:
// exact 32.09375, flush 32.0625, alt 32.03125, every intermediate exact in fp32.
constexpr std::int64_t kReduce = 64;

double reduced_value(Fp16Mode mode) {
  return mode == Fp16Mode::exact ? 32.09375 : mode == Fp16Mode::flush ? 32.0625 : 32.03125;
}
double scale(std::int64_t j) {
  constexpr double kScales[] = {1.0, 2.0, 0.5, -1.0};
  return kScales[j % 4];
}
double small_operand(std::int64_t p) { return p < 32 ? 1.0 + 0x1p-9 : 0x1p-20; }
double large_operand(std::int64_t p, std::int64_t j) { return (p < 32 ? 1.0 : 1024.0) * scale(j); }

// Forward y = x wᵀ + b with in = 64: x[b, p] = small(p), w[o, p] = large(p, o), b[o] = 1.
void check_forward(Fp16Mode mode) {
  const std::int64_t batch = 3, out = 5;
  Buffer x(DType::f16, batch * kReduce), w(DType::f16, out * kReduce), y(DType::f16, batch * out);
  std::vector<float> bias(static_cast<std::size_t>(out), 1.0f);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t p = 0; p < kReduce; ++p) x.set(b * kReduce + p, small_operand(p));
  for (std::int64_t o = 0; o < out; ++o)
    for (std::int64_t p = 0; p < kReduce; ++p) w.set(o * kReduce + p, large_operand(p, o));
  y.poison();
  LinearForwardArgs args;
  args.x = TensorView(x.data(), DType::f16, {batch, kReduce});
  args.w = TensorView(w.data(), DType::f16, {out, kReduce});
  args.bias = TensorView(bias.data(), DType::f32, {out});
  args.y = TensorView(y.data(), DType::f16, {batch, out});
  args.fp16_mode = gemm_fp16_mode();  // resolved by the caller, on its thread
  ASSERT_EQ(args.fp16_mode, mode);
  linear_forward(args);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t o = 0; o < out; ++o)
      ASSERT_EQ(y.get(b * out + o), reduced_value(mode) * scale(o) + 1.0) << b << " " << o;
}

// Backward, dx = dy w (reduction over out = 64): dy[b, o] = small(o), w[o, i] = large(o, i).
// dw = dyᵀ x (reduction over batch = 64), with db: dy[b, o] = small(b), x[b, i] = large(b, i);
// db[o] = sum over b of dy as given, in every mode (the GEMM's BGRADB is a vector-unit
// reduction: docs/DESIGN.md, "Bias gradients"): 32 (1 + 2^-9) + 32 * 2^-20. The 2^-20 terms are
// below half an fp32 ulp of a partial sum near 32 (2^-19), so whether they survive depends on the
// summation order: db is checked within the fp32 accumulation bound gamma_64 * sum |dy|
// (~1.2e-4), which would catch the bf16-rounded sum (32, a gap of 2^-4); dw tells the modes apart.
void check_backward(Fp16Mode mode) {
  const std::int64_t rows = 4, in = 6;
  {
    Buffer dy(DType::f16, rows * kReduce), w(DType::f16, kReduce * in), dx(DType::f16, rows * in);
    for (std::int64_t b = 0; b < rows; ++b)
      for (std::int64_t o = 0; o < kReduce; ++o) dy.set(b * kReduce + o, small_operand(o));
    for (std::int64_t o = 0; o < kReduce; ++o)
      for (std::int64_t i = 0; i < in; ++i) w.set(o * in + i, large_operand(o, i));
    dx.poison();
    LinearBackwardArgs args;
    args.dy = TensorView(dy.data(), DType::f16, {rows, kReduce});
    args.w = TensorView(w.data(), DType::f16, {kReduce, in});
    args.dx = TensorView(dx.data(), DType::f16, {rows, in});
    args.fp16_mode = gemm_fp16_mode();
    ASSERT_EQ(args.fp16_mode, mode);
    linear_backward(args);
    for (std::int64_t b = 0; b < rows; ++b)
      for (std::int64_t i = 0; i < in; ++i)
        ASSERT_EQ(dx.get(b * in + i), reduced_value(mode) * scale(i)) << "dx " << b << " " << i;
  }
  {
    const std::int64_t out = 5;
    Buffer dy(DType::f16, kReduce * out), x(DType::f16, kReduce * in), dw(DType::f16, out * in);
    std::vector<float> db(static_cast<std::size_t>(out), NAN);
    for (std::int64_t b = 0; b < kReduce; ++b)
      for (std::int64_t o = 0; o < out; ++o) dy.set(b * out + o, small_operand(b));
    for (std::int64_t b = 0; b < kReduce; ++b)
      for (std::int64_t i = 0; i < in; ++i) x.set(b * in + i, large_operand(b, i));
    dw.poison();
    LinearBackwardArgs args;
    args.dy = TensorView(dy.data(), DType::f16, {kReduce, out});
    args.x = TensorView(x.data(), DType::f16, {kReduce, in});
    args.dw = TensorView(dw.data(), DType::f16, {out, in});
    args.db = TensorView(db.data(), DType::f32, {out});
    args.fp16_mode = gemm_fp16_mode();
    linear_backward(args);
    for (std::int64_t o = 0; o < out; ++o) {
      for (std::int64_t i = 0; i < in; ++i)
        ASSERT_EQ(dw.get(o * in + i), reduced_value(mode) * scale(i)) << "dw " << o << " " << i;
      const double db_expected = 32 * (1.0 + 0x1p-9) + 32 * 0x1p-20;
      const double gamma = 64 * 0x1p-24 / (1 - 64 * 0x1p-24);
      EXPECT_NEAR(db[static_cast<std::size_t>(o)], db_expected, gamma * db_expected) << "db " << o;
    }
  }
}

TEST(Fp16PolicyLinear, TableThroughLinearForwardAndBackward) {
  PolicyEnvScope scope;
  struct EnvCase {
    const char* value;
    AltImplChoice choice;
  };
  const EnvCase cases[] = {{nullptr, AltImplChoice::per_pass},
                           {"1", AltImplChoice::alternate},
                           {"0", AltImplChoice::original},
                           {"2", AltImplChoice::alternate}};
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope isa_scope(isa);
    for (const EnvCase& env : cases) {
      for (const char* model_env : {"cpu", "mi200"}) {
        PolicyEnvScope::set(kGemmEnv, env.value);
        PolicyEnvScope::set(kModelEnv, model_env);
        SCOPED_TRACE(::testing::Message()
                     << "isa " << isa_name(isa) << " " << kGemmEnv << "=" << (env.value ? env.value : "(unset)") << " "
                     << kModelEnv << "=" << model_env);
        const Fp16Mode original = std::string(model_env) == "mi200" ? Fp16Mode::flush : Fp16Mode::exact;
        const Fp16Mode forward_mode = env.choice == AltImplChoice::alternate ? Fp16Mode::alt : original;
        const Fp16Mode backward_mode = env.choice == AltImplChoice::original ? original : Fp16Mode::alt;
        check_forward(forward_mode);
        {
          BackwardPassGuard backward;
          check_backward(backward_mode);
        }
      }
    }
  }
}

}  // namespace
}  // namespace ampkit
