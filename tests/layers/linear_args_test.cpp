// Tests of the Linear layer's argument checks (layers layer): every rejected call throws an
// ampkit::Error whose message names the function and the argument, and writes no output.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/layers/linear.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;

constexpr std::int64_t kBatch = 4, kIn = 6, kOut = 5;

// Buffers of one valid forward + backward call; outputs poisoned so any write shows.
struct Fixture {
  Buffer x{DType::f32, kBatch*kIn}, w{DType::bf16, kOut*kIn}, bias{DType::f32, kOut};
  Buffer y{DType::bf16, kBatch*kOut}, aux{DType::bf16, kBatch*kOut};
  Buffer dy{DType::bf16, kBatch*kOut}, below_aux{DType::f32, kBatch*kIn};
  Buffer dx{DType::f32, kBatch*kIn}, dw{DType::bf16, kOut*kIn}, db{DType::f32, kOut};
  Buffer below_db{DType::f32, kIn};
  std::vector<ampkit::testing::Bytes> before;

  Fixture() {
    for (Buffer* b : {&x, &w, &bias, &dy, &below_aux})
      for (std::int64_t i = 0; i < b->size(); ++i) b->set(i, 0.25 * static_cast<double>(i % 7) - 0.5);
    for (Buffer* b : outputs()) b->poison();
    for (Buffer* b : outputs()) before.push_back(b->bytes);
  }
  std::vector<Buffer*> outputs() { return {&y, &aux, &dx, &dw, &db, &below_db}; }
  bool outputs_untouched() {
    std::vector<Buffer*> outs = outputs();
    for (std::size_t i = 0; i < outs.size(); ++i)
      if (outs[i]->bytes != before[i]) return false;
    return true;
  }

  LinearForwardArgs forward() {
    LinearForwardArgs a;
    a.x = TensorView(x.data(), x.dtype, {kBatch, kIn});
    a.w = TensorView(w.data(), w.dtype, {kOut, kIn});
    a.bias = TensorView(bias.data(), bias.dtype, {kOut});
    a.y = TensorView(y.data(), y.dtype, {kBatch, kOut});
    a.gelu = true;
    a.aux = TensorView(aux.data(), aux.dtype, {kBatch, kOut});
    return a;
  }
  LinearBackwardArgs backward() {
    LinearBackwardArgs a;
    a.dy = TensorView(dy.data(), dy.dtype, {kBatch, kOut});
    a.x = TensorView(x.data(), x.dtype, {kBatch, kIn});
    a.w = TensorView(w.data(), w.dtype, {kOut, kIn});
    a.dx = TensorView(dx.data(), dx.dtype, {kBatch, kIn});
    a.dw = TensorView(dw.data(), dw.dtype, {kOut, kIn});
    a.db = TensorView(db.data(), db.dtype, {kOut});
    a.below_gelu = true;
    a.below_aux = TensorView(below_aux.data(), below_aux.dtype, {kBatch, kIn});
    a.below_db = TensorView(below_db.data(), below_db.dtype, {kIn});
    return a;
  }
};

// Expects `call` to throw an Error whose message contains every one of `parts`, and no output
// of the fixture to have changed.
template <typename Call>
void expect_rejected(Fixture& f, Call call, std::initializer_list<const char*> parts) {
  try {
    call();
    ADD_FAILURE() << "no Error thrown; expected one mentioning '" << *parts.begin() << "'";
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const char* p : parts) EXPECT_NE(message.find(p), std::string::npos) << "message: " << message;
  }
  EXPECT_TRUE(f.outputs_untouched()) << "a rejected call wrote an output";
}

TEST(LinearArgs, ValidCallsRun) {
  Fixture f;
  EXPECT_EQ(linear_check(f.forward()), "");
  EXPECT_EQ(linear_check(f.backward()), "");
  EXPECT_NO_THROW(linear_forward(f.forward()));
  EXPECT_NO_THROW(linear_backward(f.backward()));
  EXPECT_NE(std::string(linear_kernel_name(f.forward())), "");
}

// The check queries return the message the call would throw, without throwing.
TEST(LinearArgs, CheckReturnsTheMessage) {
  Fixture f;
  LinearForwardArgs a = f.forward();
  a.bias.dtype = DType::f16;
  EXPECT_EQ(linear_check(a), "linear_forward: bias dtype must be y's (bf16) or f32, but got f16");
  EXPECT_THROW(linear_kernel_name(a), Error);
  LinearBackwardArgs b = f.backward();
  b.w = {};
  EXPECT_EQ(linear_check(b),
            "linear_backward: w must be given ([out_features, in_features], needed for dx), but it "
            "is absent");
  EXPECT_TRUE(f.outputs_untouched());
}

TEST(LinearArgs, ForwardRejectsBadSizesNullsAndDtypes) {
  Fixture f;
  auto run = [&](auto mutate) {
    return [&f, mutate] {
      LinearForwardArgs a = f.forward();
      mutate(a);
      linear_forward(a);
    };
  };
  expect_rejected(f, run([](LinearForwardArgs& a) { a.x.shape[0] = -1; }),
                  {"linear_forward: x dimension 0 must be >= 0, but got -1"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.w.shape[1] = -2; }), {"linear_forward", "w dimension 1", "-2"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.w.shape[0] = -3; }), {"linear_forward", "w dimension 0", "-3"});
  expect_rejected(f, run([&f](LinearForwardArgs& a) {
                    a.w = TensorView(f.w.data(), f.w.dtype, {kOut, kIn - 1});
                  }),
                  {"linear_forward: w must have shape [out_features, 6] (in_features from x [4, 6]), but got [5, 5]"});
  expect_rejected(f, run([&f](LinearForwardArgs& a) {
                    a.y = TensorView(f.y.data(), f.y.dtype, {kBatch, kOut - 1});
                  }),
                  {"linear_forward: y must have shape [..., out_features] = [4, 5], but got [4, 4]"});
  expect_rejected(f, run([&f](LinearForwardArgs& a) {
                    a.bias = TensorView(f.bias.data(), f.bias.dtype, {1, kOut});
                  }),
                  {"linear_forward: bias must have shape [out_features] = [5], but got [1, 5]"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.x = {}; }), {"linear_forward: x must be given"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.y.device = Device::cuda; }), {"linear_forward", "y", "cuda:0"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.x.data = nullptr; }), {"linear_forward", "x", "null"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.w.data = nullptr; }), {"linear_forward", "w", "null"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.y.data = nullptr; }), {"linear_forward", "y", "null"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.bias.dtype = DType::f16; }),
                  {"linear_forward: bias dtype must be y's (bf16) or f32, but got f16"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.aux.dtype = DType::f16; }),
                  {"linear_forward", "aux dtype", "f16"});
  expect_rejected(f, run([](LinearForwardArgs& a) { a.gelu = false; }), {"linear_forward", "aux", "gelu"});
  expect_rejected(f, run([&f](LinearForwardArgs& a) { a.y.data = f.x.data(); }),
                  {"linear_forward", "y ([4, 5] bf16) must not overlap the input x ([4, 6] f32)"});
  expect_rejected(f, run([&f](LinearForwardArgs& a) { a.aux.data = static_cast<char*>(f.y.data()) + 2; }),
                  {"linear_forward", "must not overlap the output"});
  expect_rejected(f, run([&f](LinearForwardArgs& a) { a.bias.data = f.y.data(); }),
                  {"linear_forward", "y ([4, 5] bf16) must not overlap the input bias"});
}

TEST(LinearArgs, BackwardRejectsBadSizesNullsDtypesAndMissingAux) {
  Fixture f;
  auto run = [&](auto mutate) {
    return [&f, mutate] {
      LinearBackwardArgs a = f.backward();
      mutate(a);
      linear_backward(a);
    };
  };
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.dy.shape[1] = -1; }),
                  {"linear_backward: dy dimension 1 must be >= 0, but got -1"});
  expect_rejected(f, run([&f](LinearBackwardArgs& a) {
                    a.dx = TensorView(f.dx.data(), f.dx.dtype, {kBatch + 1, kIn});
                  }),
                  {"linear_backward: dx must have shape [..., in_features] = [4, 6], but got [5, 6]"});
  expect_rejected(f, run([&f](LinearBackwardArgs& a) {
                    a.dw = TensorView(f.dw.data(), f.dw.dtype, {kIn, kOut});
                  }),
                  {"linear_backward: dw must have shape [out_features, in_features] = [5, 6], but got [6, 5]"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.dy = {}; }), {"linear_backward: dy must be given"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.below_aux = {}; }),
                  {"linear_backward", "below_aux", "required when below_gelu"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.dx = {}; }), {"linear_backward", "below_gelu needs dx"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.below_gelu = false; }),
                  {"linear_backward", "below_db", "below_gelu"});
  expect_rejected(f, run([](LinearBackwardArgs& a) {
                    a.below_gelu = false;
                    a.below_db = {};
                  }),
                  {"linear_backward", "below_aux is only read with below_gelu"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.dy.data = nullptr; }), {"linear_backward", "dy", "null"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.x.data = nullptr; }), {"linear_backward", "x", "needed for dw"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.w.data = nullptr; }), {"linear_backward", "w", "needed for dx"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.db.dtype = DType::f16; }),
                  {"linear_backward: db dtype must be dw's (bf16) or f32, but got f16"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.below_db.dtype = DType::bf16; }),
                  {"linear_backward", "below_db dtype", "dx's (f32)"});
  expect_rejected(f, run([](LinearBackwardArgs& a) { a.below_aux.dtype = DType::f16; }),
                  {"linear_backward", "below_aux dtype"});
  // dx is written before the dw GEMM reads x and dy: any overlap is rejected.
  expect_rejected(f, run([&f](LinearBackwardArgs& a) { a.dx.data = f.x.data(); }),
                  {"linear_backward", "dx ([4, 6] f32) must not overlap the input x"});
  expect_rejected(f, run([&f](LinearBackwardArgs& a) { a.dw.data = f.dy.data(); }),
                  {"linear_backward", "dw ([5, 6] bf16) must not overlap the input dy"});
  expect_rejected(f, run([&f](LinearBackwardArgs& a) { a.db.data = f.dw.data(); }),
                  {"linear_backward", "dw ([5, 6] bf16) must not overlap the output db"});
  expect_rejected(f, run([&f](LinearBackwardArgs& a) { a.below_db.data = f.below_aux.data(); }),
                  {"linear_backward", "below_db ([6] f32) must not overlap the input below_aux"});
}

}  // namespace
}  // namespace ampkit
