// GEMM bad input: every rejected call throws ampkit::Error with a message naming the argument,
// gemm_check returns the same message, gemm_kernel_name throws too, and no output (D, aux,
// bias_grad) is touched: they stay byte-identical to their poison.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "cpu/gemm/gemm_test_harness.hpp"

namespace ampkit {
namespace {

using gemm_test::GemmBuffers;
using gemm_test::GemmCase;

// A valid problem whose every output is poisoned (bias_grad too).
GemmBuffers valid_problem(Epilogue kind, std::mt19937_64& rng) {
  GemmCase c;
  c.m = 9, c.n = 7, c.k = 5;
  c.kind = kind;
  c.beta = 1.0f;
  c.a = DType::bf16, c.b = DType::f16, c.c = DType::f32, c.d = DType::bf16;
  c.bias_dtype = c.aux_dtype = DType::f32;
  return gemm_test::make_buffers(c, rng);
}

// Expects args to be rejected with a message containing every fragment, outputs untouched.
void expect_rejected(GemmBuffers t, const GemmArgs& args, std::initializer_list<const char*> fragments) {
  const GemmBuffers before = t;
  const std::string check = gemm_check(args);
  EXPECT_FALSE(check.empty());
  std::string thrown;
  try {
    gemm(args);
  } catch (const Error& e) {
    thrown = e.what();
  }
  EXPECT_EQ(thrown, check);
  EXPECT_EQ(thrown.rfind("gemm: ", 0), 0u) << thrown;
  for (const char* f : fragments) EXPECT_NE(thrown.find(f), std::string::npos) << "'" << f << "' not in: " << thrown;
  EXPECT_THROW(gemm_kernel_name(args), Error);
  EXPECT_EQ(t.d.bytes, before.d.bytes) << thrown;
  EXPECT_EQ(t.aux.bytes, before.aux.bytes) << thrown;
  EXPECT_EQ(t.bias_grad.bytes, before.bias_grad.bytes) << thrown;
}

TEST(GemmValidation, ValidProblemsPass) {
  std::mt19937_64 rng(testing::fresh_seed());
  for (Epilogue kind : {Epilogue::DEFAULT, Epilogue::GELU_AUX_BIAS, Epilogue::DRELU_BGRAD, Epilogue::BGRADB}) {
    GemmBuffers t = valid_problem(kind, rng);
    EXPECT_EQ(gemm_check(t.args()), "");
    EXPECT_NO_THROW(gemm(t.args()));
    EXPECT_STRNE(gemm_kernel_name(t.args()), "");
  }
}

TEST(GemmValidation, ShapesAndLeadingDimensions) {
  std::mt19937_64 rng(testing::fresh_seed());
  GemmBuffers t = valid_problem(Epilogue::DEFAULT, rng);
  GemmArgs g = t.args();
  g.m = -1;
  expect_rejected(t, g, {"m must be >= 0", "-1"});
  g = t.args(), g.k = -3;
  expect_rejected(t, g, {"k must be >= 0", "-3"});
  g = t.args(), g.lda = 8;
  expect_rejected(t, g, {"lda (8) must be >= max(1, m) (9) for op(A) = N"});
  g = t.args(), g.op_a = Op::T, g.lda = 9;  // stored k x m: lda >= k = 5 is fine
  EXPECT_EQ(gemm_check(g), "");
  g.lda = 4;
  expect_rejected(t, g, {"lda (4) must be >= max(1, k) (5) for op(A) = T"});
  g = t.args(), g.ldb = 4;
  expect_rejected(t, g, {"ldb (4) must be >= max(1, k) (5)"});
  g = t.args(), g.op_b = Op::T, g.ldb = 6;
  expect_rejected(t, g, {"ldb (6) must be >= max(1, n) (7) for op(B) = T"});
  g = t.args(), g.ldd = 0;
  expect_rejected(t, g, {"ldd (0) must be >= max(1, m) (9)"});
  g = t.args(), g.ldc = 3;
  expect_rejected(t, g, {"ldc (3)"});
  GemmBuffers x = valid_problem(Epilogue::GELU_AUX, rng);
  g = x.args(), g.epilogue.aux_ld = 8;
  expect_rejected(x, g, {"epilogue.aux_ld (8) must be >= max(1, m) (9)", "GELU_AUX"});
}

TEST(GemmValidation, EpiloguePointersAndDtypes) {
  std::mt19937_64 rng(testing::fresh_seed());
  GemmBuffers bgrad = valid_problem(Epilogue::DGELU_BGRAD, rng);
  GemmArgs g = bgrad.args();
  g.epilogue.bias_grad = nullptr;
  expect_rejected(bgrad, g, {"epilogue.bias_grad must be set", "DGELU_BGRAD"});
  g = bgrad.args(), g.epilogue.aux = nullptr;
  expect_rejected(bgrad, g, {"epilogue.aux must be set"});
  g = bgrad.args(), g.epilogue.bias_dtype = DType::f16;
  expect_rejected(bgrad, g, {"epilogue.bias_dtype must be f32 or d_dtype (bf16), but got f16"});
  g = bgrad.args(), g.epilogue.kind = Epilogue::DGELU;  // bias_grad given where there is none
  expect_rejected(bgrad, g, {"epilogue.bias_grad must be null for epilogue DGELU"});
  GemmBuffers plain = valid_problem(Epilogue::DEFAULT, rng);
  g = plain.args(), g.epilogue.bias_grad = bgrad.bias_grad.data();
  expect_rejected(plain, g, {"epilogue.bias_grad must be null for epilogue DEFAULT"});
  g = plain.args(), g.epilogue.aux = bgrad.aux.data(), g.epilogue.aux_ld = 9;
  expect_rejected(plain, g, {"epilogue.aux must be null for epilogue DEFAULT"});
  GemmBuffers bias = valid_problem(Epilogue::GELU_AUX_BIAS, rng);
  g = bias.args(), g.epilogue.bias = nullptr;
  expect_rejected(bias, g, {"epilogue.bias must be set", "GELU_AUX_BIAS"});
  g = bias.args(), g.epilogue.aux_dtype = DType::f16;
  expect_rejected(bias, g, {"epilogue.aux_dtype must be f32 or d_dtype (bf16), but got f16"});
  g = plain.args(), g.epilogue.bias = bias.bias.data();
  expect_rejected(plain, g, {"epilogue.bias must be null for epilogue DEFAULT"});
  g = plain.args(), g.epilogue.kind = static_cast<Epilogue>(99);
  expect_rejected(plain, g, {"epilogue.kind", "99"});
  g = plain.args(), g.d_dtype = static_cast<DType>(7);
  expect_rejected(plain, g, {"d_dtype must be f32, bf16 or f16"});
}

TEST(GemmValidation, NullPointersAndOverflow) {
  std::mt19937_64 rng(testing::fresh_seed());
  GemmBuffers t = valid_problem(Epilogue::DEFAULT, rng);
  GemmArgs g = t.args();
  g.a = nullptr;
  expect_rejected(t, g, {"a is null", "9 x 5"});
  g = t.args(), g.b = nullptr;
  expect_rejected(t, g, {"b is null"});
  g = t.args(), g.c = nullptr;
  expect_rejected(t, g, {"c must be set when beta != 0"});
  g = t.args(), g.c = nullptr, g.beta = 0.0f;  // C unused: null is fine
  EXPECT_EQ(gemm_check(g), "");
  g = t.args(), g.d = nullptr;
  expect_rejected(t, g, {"d is null"});
  g = t.args(), g.a = nullptr, g.k = 0;  // no elements: null is fine
  EXPECT_EQ(gemm_check(g), "");
  g = t.args(), g.m = std::numeric_limits<std::int64_t>::max() / 2, g.lda = g.m, g.ldc = g.m, g.ldd = g.m;
  expect_rejected(t, g, {"must fit in int64, but it overflows"});
}

TEST(GemmValidation, Aliasing) {
  std::mt19937_64 rng(testing::fresh_seed());
  GemmBuffers t = valid_problem(Epilogue::DEFAULT, rng);
  GemmArgs g = t.args();
  g.a = static_cast<unsigned char*>(t.d.data()) + 4;
  g.a_dtype = DType::bf16;
  expect_rejected(t, g, {"d (output) must not overlap a"});
  g = t.args(), g.b = t.d.data();
  expect_rejected(t, g, {"d (output) must not overlap b"});
  g = t.args(), g.c = static_cast<unsigned char*>(t.d.data()) + 2, g.c_dtype = DType::bf16;
  expect_rejected(t, g, {"d (output) must not overlap c"});
  g = t.args(), g.c = t.d.data(), g.c_dtype = DType::f32, g.ldc = g.ldd;
  expect_rejected(t, g, {"c may alias d only with the same dtype and leading dimension"});
  g = t.args(), g.c = t.d.data(), g.c_dtype = DType::bf16, g.ldc = g.ldd;  // exact in place
  EXPECT_EQ(gemm_check(g), "");
  GemmBuffers x = valid_problem(Epilogue::GELU_AUX_BIAS, rng);
  g = x.args(), g.epilogue.aux = static_cast<unsigned char*>(x.d.data()) + 8;
  expect_rejected(x, g, {"d (output) must not overlap epilogue.aux"});
  g = x.args(), g.epilogue.bias = x.aux.data();
  expect_rejected(x, g, {"epilogue.aux (output) must not overlap epilogue.bias"});
  GemmBuffers y = valid_problem(Epilogue::BGRADA, rng);
  g = y.args(), g.epilogue.bias_grad = const_cast<void*>(g.a);
  expect_rejected(y, g, {"epilogue.bias_grad (output) must not overlap a"});
}

}  // namespace
}  // namespace ampkit
