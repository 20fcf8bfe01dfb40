// Bad arguments of the optimizer ops: adamw_step, sgd_step, global_grad_norm and all_finite reject
// each with the documented error kind and message, and leave every operand as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "core/element.hpp"
#include "ops/elementwise/op_test_support.hpp"
#include "ops/optimizer/optimizer_kernels.hpp"
#include "ops/optimizer/optimizer_test_support.hpp"

namespace ampkit {
namespace {

using namespace ops_testing;

struct Case {
  const char* what;
  std::function<void()> call;
  ErrorKind kind;
  std::vector<const char*> parts;
};

TensorView on_cuda(TensorView v) {
  v.device = Device::cuda;
  return v;
}

TEST(AdamW, BadArgumentsAreRejectedAndNothingIsWritten) {
  std::mt19937_64 rng(5);
  const std::int64_t n = 12;
  Buffer param = random_buffer(rng, DType::f32, n), grad = random_buffer(rng, DType::bf16, n);
  Buffer m = random_buffer(rng, DType::f32, n), v(DType::f32, n), copy(DType::f16, n);
  Buffer big(DType::f32, 64);
  copy.poison();
  const Buffer saved[] = {param, grad, m, v, copy};
  AdamWArgs good;
  good.param = view_of(param, {3, 4});
  good.grad = view_of(grad, {3, 4});
  good.m = view_of(m, {3, 4});
  good.v = view_of(v, {3, 4});
  good.param_copy = view_of(copy, {3, 4});
  good.lr = 1e-3f;
  good.step = 1;
  const char* fn = "adamw_step: ";
  const ErrorKind invalid = ErrorKind::invalid_argument;
  auto with = [&](std::function<void(AdamWArgs&)> edit) {
    return std::function<void()>([=] {
      AdamWArgs a = good;
      edit(a);
      adamw_step(a);
    });
  };
  TensorView transposed = good.m;
  transposed.shape = {4, 3};
  transposed.strides = {1, 4};
  const Case cases[] = {
      {"step 0", with([](AdamWArgs& a) { a.step = 0; }), invalid, {fn, "step must be >= 1", "but got 0"}},
      {"step -3", with([](AdamWArgs& a) { a.step = -3; }), invalid, {fn, "step must be >= 1", "but got -3"}},
      {"lr < 0", with([](AdamWArgs& a) { a.lr = -1.0f; }), invalid, {fn, "lr must be finite and >= 0, but got -1"}},
      {"lr nan", with([](AdamWArgs& a) { a.lr = NAN; }), invalid, {fn, "lr must be finite and >= 0, but got nan"}},
      {"lr inf", with([](AdamWArgs& a) { a.lr = INFINITY; }), invalid, {fn, "lr must be finite and >= 0, but got inf"}},
      {"beta1 1", with([](AdamWArgs& a) { a.beta1 = 1.0f; }), invalid, {fn, "beta1 must be in [0, 1), but got 1"}},
      {"beta1 nan", with([](AdamWArgs& a) { a.beta1 = NAN; }), invalid, {fn, "beta1 must be in [0, 1)"}},
      {"beta2 < 0",
       with([](AdamWArgs& a) { a.beta2 = -0.5f; }),
       invalid,
       {fn, "beta2 must be in [0, 1), but got -0.5"}},
      {"eps < 0", with([](AdamWArgs& a) { a.eps = -1e-8f; }), invalid, {fn, "eps must be finite and >= 0"}},
      {"weight_decay < 0",
       with([](AdamWArgs& a) { a.weight_decay = -0.1f; }),
       invalid,
       {fn, "weight_decay must be finite and >= 0"}},
      {"grad_scale inf",
       with([](AdamWArgs& a) { a.grad_scale = INFINITY; }),
       invalid,
       {fn, "grad_scale must be finite, but got inf"}},
      {"param absent",
       with([](AdamWArgs& a) { a.param = TensorView(); }),
       invalid,
       {fn, "param must be given", "but it is absent"}},
      {"m absent", with([](AdamWArgs& a) { a.m = TensorView(); }), invalid, {fn, "m must be given (the first moment)"}},
      {"param bf16",
       with([&](AdamWArgs& a) {
         a.param = view_of(copy, {3, 4});
       }),
       invalid,
       {fn, "param dtype must be f32", "but got f16"}},
      {"v bf16",
       with([&](AdamWArgs& a) {
         a.v = view_of(grad, {3, 4});
       }),
       invalid,
       {fn, "v dtype must be f32", "but got bf16"}},
      {"grad i32",
       with([&](AdamWArgs& a) {
         a.grad = TensorView(grad.data(), DType::i32, {3, 2});
       }),
       invalid,
       {fn, "grad dtype must be f32, bf16 or f16, but got i32"}},
      {"grad shape",
       with([&](AdamWArgs& a) {
         a.grad = view_of(grad, {4, 3});
       }),
       invalid,
       {fn, "grad shape must equal param's shape [3, 4], but got [4, 3]"}},
      {"param_copy shape",
       with([&](AdamWArgs& a) { a.param_copy = view_of(copy, {12}); }),
       invalid,
       {fn, "param_copy shape must equal param's shape [3, 4], but got [12]"}},
      {"m not contiguous",
       with([&](AdamWArgs& a) { a.m = transposed; }),
       invalid,
       {fn, "m must be row-major contiguous"}},
      {"v on cuda",
       with([&](AdamWArgs& a) { a.v = on_cuda(a.v); }),
       ErrorKind::unsupported,
       {fn, "v is in cuda:0 memory"}},
      {"grad null",
       with([&](AdamWArgs& a) {
         a.grad = TensorView(nullptr, DType::bf16, {3, 4});
       }),
       invalid,
       {fn, "grad must point to", "but got null"}},
      {"m is param", with([&](AdamWArgs& a) { a.m = a.param; }), invalid, {fn, "must not overlap", "param"}},
      {"v overlaps m",
       with([&](AdamWArgs& a) {
         a.v = TensorView(f32(m) + 5, DType::f32, {3, 4});
       }),
       invalid,
       {fn, "must not overlap", "m"}},
      {"copy overlaps grad",
       with([&](AdamWArgs& a) {
         a.param_copy = TensorView(static_cast<std::uint16_t*>(grad.data()) + 11, DType::bf16, {3, 4});
       }),
       invalid,
       {fn, "param_copy", "must not overlap the input grad"}},
      {"param overlaps grad",
       with([&](AdamWArgs& a) {
         a.grad = TensorView(f32(param) + 6, DType::f32, {3, 4});
       }),
       invalid,
       {fn, "param", "must not overlap the input grad"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_TRUE(fails_with(c.call, c.kind, c.parts));
    EXPECT_TRUE(same_bytes("param", param, saved[0]));
    EXPECT_TRUE(same_bytes("grad", grad, saved[1]));
    EXPECT_TRUE(same_bytes("m", m, saved[2]));
    EXPECT_TRUE(same_bytes("v", v, saved[3]));
    EXPECT_TRUE(same_bytes("param_copy", copy, saved[4]));
  }
  // Empty parameters are accepted and write nothing; the good call writes.
  AdamWArgs empty = good;
  empty.param = view_of(param, {0, 4});
  empty.grad = view_of(grad, {0, 4});
  empty.m = view_of(m, {0, 4});
  empty.v = view_of(v, {0, 4});
  empty.param_copy = view_of(copy, {0, 4});
  adamw_step(empty);
  EXPECT_TRUE(same_bytes("param", param, saved[0]));
  adamw_step(good);
  EXPECT_FALSE(param.bytes == saved[0].bytes);
  EXPECT_TRUE(copy_is_rounded_param(param, copy));
}

TEST(Sgd, BadArgumentsAreRejectedAndNothingIsWritten) {
  std::mt19937_64 rng(6);
  const std::int64_t n = 10;
  Buffer param = random_buffer(rng, DType::f32, n), grad = random_buffer(rng, DType::f16, n);
  Buffer buf = random_buffer(rng, DType::f32, n), copy(DType::bf16, n);
  copy.poison();
  const Buffer saved[] = {param, grad, buf, copy};
  SgdArgs good;
  good.param = view_of(param, {n});
  good.grad = view_of(grad, {n});
  good.momentum_buffer = view_of(buf, {n});
  good.param_copy = view_of(copy, {n});
  good.lr = 0.1f;
  good.momentum = 0.9f;
  const char* fn = "sgd_step: ";
  const ErrorKind invalid = ErrorKind::invalid_argument;
  auto with = [&](std::function<void(SgdArgs&)> edit) {
    return std::function<void()>([=] {
      SgdArgs a = good;
      edit(a);
      sgd_step(a);
    });
  };
  const Case cases[] = {
      {"no buffer with momentum",
       with([](SgdArgs& a) { a.momentum_buffer = TensorView(); }),
       invalid,
       {fn, "momentum_buffer must be given (momentum is not 0), but it is absent"}},
      {"momentum 1",
       with([](SgdArgs& a) { a.momentum = 1.0f; }),
       invalid,
       {fn, "momentum must be in [0, 1), but got 1"}},
      {"momentum < 0", with([](SgdArgs& a) { a.momentum = -0.1f; }), invalid, {fn, "momentum must be in [0, 1)"}},
      {"lr < 0", with([](SgdArgs& a) { a.lr = -0.1f; }), invalid, {fn, "lr must be finite and >= 0"}},
      {"weight_decay nan",
       with([](SgdArgs& a) { a.weight_decay = NAN; }),
       invalid,
       {fn, "weight_decay must be finite and >= 0, but got nan"}},
      {"grad_scale nan", with([](SgdArgs& a) { a.grad_scale = NAN; }), invalid, {fn, "grad_scale must be finite"}},
      {"buffer f16",
       with([&](SgdArgs& a) { a.momentum_buffer = view_of(grad, {n}); }),
       invalid,
       {fn, "momentum_buffer dtype must be f32", "but got f16"}},
      {"buffer shape",
       with([&](SgdArgs& a) {
         a.momentum_buffer = view_of(buf, {2, 5});
       }),
       invalid,
       {fn, "momentum_buffer shape must equal param's shape [10], but got [2, 5]"}},
      {"buffer given with momentum 0 but wrong",
       with([&](SgdArgs& a) {
         a.momentum = 0.0f;
         a.momentum_buffer = view_of(buf, {9});
       }),
       invalid,
       {fn, "momentum_buffer shape must equal"}},
      {"param f16", with([&](SgdArgs& a) { a.param = view_of(grad, {n}); }), invalid, {fn, "param dtype must be f32"}},
      {"grad on cuda",
       with([&](SgdArgs& a) { a.grad = on_cuda(a.grad); }),
       ErrorKind::unsupported,
       {fn, "grad is in cuda:0 memory"}},
      {"copy is grad",
       with([&](SgdArgs& a) { a.param_copy = a.grad; }),
       invalid,
       {fn, "param_copy", "must not overlap the input grad"}},
      {"buffer overlaps param",
       with([&](SgdArgs& a) { a.momentum_buffer = TensorView(f32(param) + 9, DType::f32, {n}); }),
       invalid,
       {fn, "must not overlap", "param"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_TRUE(fails_with(c.call, c.kind, c.parts));
    EXPECT_TRUE(same_bytes("param", param, saved[0]));
    EXPECT_TRUE(same_bytes("grad", grad, saved[1]));
    EXPECT_TRUE(same_bytes("momentum_buffer", buf, saved[2]));
    EXPECT_TRUE(same_bytes("param_copy", copy, saved[3]));
  }
  // Momentum 0 without a buffer is fine.
  SgdArgs plain = good;
  plain.momentum = 0.0f;
  plain.momentum_buffer = TensorView();
  sgd_step(plain);
  EXPECT_TRUE(same_bytes("momentum_buffer", buf, saved[2]));
  EXPECT_TRUE(copy_is_rounded_param(param, copy));
}

TEST(GlobalGradNormAndAllFinite, BadArgumentsAreRejected) {
  Buffer a(DType::f32, 6), b(DType::i32, 6);
  TensorView strided = view_of(a, {3});
  strided.strides[0] = 2;
  const TensorView good = view_of(a, {2, 3});
  const ErrorKind invalid = ErrorKind::invalid_argument;
  struct ListCase {
    const char* what;
    std::vector<TensorView> views;
    ErrorKind kind;
    const char* part;
  };
  const ListCase cases[] = {
      {"absent", {good, TensorView()}, invalid, "[1] must be given"},
      {"i32", {view_of(b, {6}), good}, invalid, "[0] dtype must be f32, bf16 or f16, but got i32"},
      {"strided", {good, good, strided}, invalid, "[2] must be row-major contiguous"},
      {"cuda", {on_cuda(good)}, ErrorKind::unsupported, "[0] is in cuda:0 memory"},
      {"null", {TensorView(nullptr, DType::bf16, {4})}, invalid, "[0] must point to"},
  };
  for (const ListCase& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_TRUE(fails_with([&] { global_grad_norm(c.views); }, c.kind, {"global_grad_norm: grads", c.part}));
    EXPECT_TRUE(fails_with([&] { all_finite(c.views); }, c.kind, {"all_finite: views", c.part}));
  }
}

}  // namespace
}  // namespace ampkit
