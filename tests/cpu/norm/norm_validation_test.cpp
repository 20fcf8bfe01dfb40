// Bad arguments of the four LayerNorm/RMSNorm calls (ops layer tests): each is rejected with an
// ampkit::Error naming the function and the argument (some messages checked in full), and no
// byte of any operand changes. Also: rows = 0 is valid (dgamma/dbeta become 0, or stay
// unchanged when accumulating), absent outputs are allowed, the check/kernel-name queries agree.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/ops/norm.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;

constexpr std::int64_t kRows = 4, kN = 8;

// Valid operands of one call (x, dy, dx, y bf16; parameters f32), outputs poisoned. Extra room
// at the end of every buffer lets a case point one operand into another.
struct Operands {
  Buffer x{DType::bf16, kRows*kN}, y{DType::bf16, kRows*kN}, dy{DType::bf16, kRows*kN}, dx{DType::bf16, kRows*kN},
      gamma{DType::f32, kN}, beta{DType::f32, kN}, dgamma{DType::f32, kN}, dbeta{DType::f32, kN},
      mean{DType::f32, kRows}, rstd{DType::f32, kRows};
  Operands() {
    std::mt19937_64 rng(7);
    for (Buffer* b : {&x, &dy, &gamma, &beta}) b->fill_normal(rng, 0.5, 1.0);
    mean.fill_normal(rng, 0.5, 0.1);
    rstd.fill_normal(rng, 1.0, 0.1);
    for (Buffer* b : {&y, &dx, &dgamma, &dbeta}) b->poison();
  }
  std::vector<ampkit::testing::Bytes> snapshot() const {
    return {x.bytes,    y.bytes,      dy.bytes,    dx.bytes,   gamma.bytes,
            beta.bytes, dgamma.bytes, dbeta.bytes, mean.bytes, rstd.bytes};
  }
  NormForwardArgs forward() {
    NormForwardArgs a;
    a.x = TensorView(x.data(), DType::bf16, {kRows, kN});
    a.gamma = TensorView(gamma.data(), DType::f32, {kN});
    a.beta = TensorView(beta.data(), DType::f32, {kN});
    a.y = TensorView(y.data(), DType::bf16, {kRows, kN});
    a.mean = TensorView(mean.data(), DType::f32, {kRows});
    a.rstd = TensorView(rstd.data(), DType::f32, {kRows});
    return a;
  }
  NormBackwardArgs backward() {
    NormBackwardArgs a;
    a.dy = TensorView(dy.data(), DType::bf16, {kRows, kN});
    a.x = TensorView(x.data(), DType::bf16, {kRows, kN});
    a.mean = TensorView(mean.data(), DType::f32, {kRows});
    a.rstd = TensorView(rstd.data(), DType::f32, {kRows});
    a.gamma = TensorView(gamma.data(), DType::f32, {kN});
    a.dx = TensorView(dx.data(), DType::bf16, {kRows, kN});
    a.dgamma = TensorView(dgamma.data(), DType::f32, {kN});
    a.dbeta = TensorView(dbeta.data(), DType::f32, {kN});
    return a;
  }
};

// Calls `call` (which must throw), checks the message names the function and the argument (or
// equals `exact` when given), and that no operand changed.
void expect_rejected(const std::function<void(Operands&)>& call, const std::string& function,
                     const std::string& argument, const std::string& exact = "") {
  SCOPED_TRACE(function + " / " + argument);
  Operands ops;
  const auto before = ops.snapshot();
  try {
    call(ops);
    ADD_FAILURE() << "no Error thrown";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(function + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(argument), std::string::npos) << message;
    if (!exact.empty()) {
      EXPECT_EQ(message, exact);
    }
  }
  EXPECT_TRUE(ops.snapshot() == before) << "an operand changed on a rejected call";
}

TEST(NormValidation, ForwardRejectsBadArguments) {
  for (bool rms : {false, true}) {
    const std::string fn = rms ? "rms_norm_forward" : "layer_norm_forward";
    auto run = [rms](NormForwardArgs a) {
      if (rms) {
        a.beta = {};
        a.mean = {};
        rms_norm_forward(a);
      } else {
        layer_norm_forward(a);
      }
    };
    using Edit = std::function<void(NormForwardArgs&, Operands&)>;
    auto reject = [&](const char* argument, Edit edit, const std::string& exact = "") {
      expect_rejected(
          [&](Operands& ops) {
            NormForwardArgs a = ops.forward();
            edit(a, ops);
            run(a);
          },
          fn, argument, exact);
    };
    reject(
        "x", [](NormForwardArgs& a, Operands&) { a.x.shape[0] = -1; }, fn + ": x dimension 0 must be >= 0, but got -1");
    reject(
        "n",
        [](NormForwardArgs& a, Operands& ops) {
          a.x = TensorView(ops.x.data(), DType::bf16, {kRows, 0});
          a.y = TensorView(ops.y.data(), DType::bf16, {kRows, 0});
        },
        fn + ": n must be >= 1, but got 0 (x has shape [4, 0], normalized_rank 1)");
    reject("rows * n", [](NormForwardArgs& a, Operands& ops) {
      a.x = TensorView(ops.x.data(), DType::bf16, {std::int64_t{1} << 31, std::int64_t{1} << 30});
    });
    reject(
        "y must have x's shape",
        [](NormForwardArgs& a, Operands& ops) {
          a.y = TensorView(ops.y.data(), DType::bf16, {kRows, kN + 1});
        },
        fn + ": y must have x's shape [4, 8], but got [4, 9]");
    reject(
        "gamma must have x's normalized dims",
        [](NormForwardArgs& a, Operands& ops) { a.gamma = TensorView(ops.gamma.data(), DType::f32, {kN - 1}); },
        fn + ": gamma must have x's normalized dims [8], but got [7]");
    reject("rstd must have shape [4]",
           [](NormForwardArgs& a, Operands& ops) { a.rstd = TensorView(ops.rstd.data(), DType::f32, {kRows - 1}); });
    reject("rstd dtype",
           [](NormForwardArgs& a, Operands& ops) { a.rstd = TensorView(ops.rstd.data(), DType::bf16, {kRows}); });
    reject("normalized_rank", [](NormForwardArgs& a, Operands&) { a.normalized_rank = 3; });
    reject("normalized_rank", [](NormForwardArgs& a, Operands&) { a.normalized_rank = 0; });
    reject("x must be given", [](NormForwardArgs& a, Operands&) { a.x = {}; });
    reject("y must be given", [](NormForwardArgs& a, Operands&) { a.y = {}; });
    reject("x must be row-major contiguous", [](NormForwardArgs& a, Operands&) { a.x.strides[0] = kN + 1; });
    reject(
        "x", [](NormForwardArgs& a, Operands&) { a.x.data = nullptr; },
        fn + ": x must point to [4, 8] bf16 elements, but got null");
    reject("y", [](NormForwardArgs& a, Operands&) { a.y.data = nullptr; });
    reject("x dtype", [](NormForwardArgs& a, Operands&) { a.x.dtype = static_cast<DType>(7); });
    reject(
        "y dtype", [](NormForwardArgs& a, Operands&) { a.y.dtype = DType::f32; },
        fn + ": y dtype must equal x's dtype (bf16), but got f32");
    reject(
        "gamma dtype", [](NormForwardArgs& a, Operands&) { a.gamma.dtype = DType::f16; },
        fn + ": gamma dtype must be x's dtype (bf16) or f32, but got f16");
    for (float eps : {-1.0f, std::nanf(""), std::numeric_limits<float>::infinity()})
      reject("eps", [eps](NormForwardArgs& a, Operands&) { a.eps = eps; });
    reject(
        "eps", [](NormForwardArgs& a, Operands&) { a.eps = -1.0f; }, fn + ": eps must be finite and >= 0, but got -1");
    reject(
        "y", [](NormForwardArgs& a, Operands& ops) { a.y.data = ops.x.data(); },
        fn + ": y ([4, 8] bf16) must not overlap the input x ([4, 8] bf16), but their memory "
             "ranges overlap");
    reject("y", [](NormForwardArgs& a, Operands& ops) {
      a.y.data = static_cast<std::uint16_t*>(ops.x.data()) + 31;  // last element of x
    });
    reject("y", [](NormForwardArgs& a, Operands& ops) {
      a.y.data = ops.gamma.data();  // y covers gamma
    });
    reject("rstd", [](NormForwardArgs& a, Operands& ops) { a.rstd.data = static_cast<float*>(ops.y.data()) + 2; });
    reject("rstd", [](NormForwardArgs& a, Operands& ops) { a.rstd.data = static_cast<float*>(ops.gamma.data()) + 7; });
    if (!rms) {
      reject(
          "beta dtype", [](NormForwardArgs& a, Operands&) { a.beta.dtype = DType::bf16; },
          fn + ": beta dtype must equal gamma's dtype (f32), but got bf16");
      reject("mean", [](NormForwardArgs& a, Operands& ops) { a.mean.data = static_cast<float*>(ops.rstd.data()) + 3; });
      reject("mean", [](NormForwardArgs& a, Operands& ops) { a.mean.data = static_cast<float*>(ops.beta.data()); });
      reject("y", [](NormForwardArgs& a, Operands& ops) { a.beta.data = ops.y.data(); });
    }
  }
  // RMSNorm has no beta and no mean.
  expect_rejected([](Operands& ops) { rms_norm_forward(ops.forward()); }, "rms_norm_forward", "beta",
                  "rms_norm_forward: beta must be absent for RMSNorm, which has no shift, but got "
                  "[8] f32");
  expect_rejected(
      [](Operands& ops) {
        NormForwardArgs a = ops.forward();
        a.beta = {};
        rms_norm_forward(a);
      },
      "rms_norm_forward", "mean");
}

TEST(NormValidation, BackwardRejectsBadArguments) {
  for (bool rms : {false, true}) {
    const std::string fn = rms ? "rms_norm_backward" : "layer_norm_backward";
    auto run = [rms](NormBackwardArgs a) {
      if (rms) {
        a.dbeta = {};
        a.mean = {};
        rms_norm_backward(a);
      } else {
        layer_norm_backward(a);
      }
    };
    using Edit = std::function<void(NormBackwardArgs&, Operands&)>;
    auto reject = [&](const char* argument, Edit edit, const std::string& exact = "") {
      expect_rejected(
          [&](Operands& ops) {
            NormBackwardArgs a = ops.backward();
            edit(a, ops);
            run(a);
          },
          fn, argument, exact);
    };
    reject("dy dimension 0", [](NormBackwardArgs& a, Operands&) { a.dy.shape[0] = -5; });
    reject("dy dimension 1", [](NormBackwardArgs& a, Operands&) { a.dy.shape[1] = -1; });
    reject("dy", [](NormBackwardArgs& a, Operands&) {
      a.dy.shape[0] = std::numeric_limits<std::int64_t>::max();
      a.dy.shape[1] = 2;
    });
    reject(
        "x must have dy's shape",
        [](NormBackwardArgs& a, Operands& ops) {
          a.x = TensorView(ops.x.data(), DType::bf16, {kRows, 2, kN / 2});
        },
        fn + ": x must have dy's shape [4, 8], but got [4, 2, 4]");
    reject("dgamma must have dy's normalized dims", [](NormBackwardArgs& a, Operands& ops) {
      a.dgamma = TensorView(ops.dgamma.data(), DType::f32, {1, kN});
    });
    reject("dy must be given", [](NormBackwardArgs& a, Operands&) { a.dy = {}; });
    reject("rstd must be given", [](NormBackwardArgs& a, Operands&) { a.rstd = {}; });
    reject("dy", [](NormBackwardArgs& a, Operands&) { a.dy.data = nullptr; });
    reject("x", [](NormBackwardArgs& a, Operands&) { a.x.data = nullptr; });
    reject(
        "rstd", [](NormBackwardArgs& a, Operands&) { a.rstd.data = nullptr; },
        fn + ": rstd must point to [4] f32 values from the forward (needed for dx), but got "
             "null");
    reject("rstd", [](NormBackwardArgs& a, Operands&) {  // dgamma alone needs it too
      a.rstd = {};
      a.dx = {};
    });
    reject(
        "x dtype", [](NormBackwardArgs& a, Operands&) { a.x.dtype = DType::f16; },
        fn + ": x dtype must equal dy's dtype (bf16), but got f16");
    reject("dx dtype", [](NormBackwardArgs& a, Operands&) { a.dx.dtype = DType::f32; });
    reject("dy dtype", [](NormBackwardArgs& a, Operands&) { a.dy.dtype = static_cast<DType>(9); });
    reject("gamma dtype", [](NormBackwardArgs& a, Operands&) { a.gamma.dtype = DType::f16; });
    reject(
        "dgamma dtype", [](NormBackwardArgs& a, Operands&) { a.dgamma.dtype = DType::bf16; },
        fn + ": dgamma dtype must equal gamma's dtype (f32), but got bf16");
    reject(
        "dgamma", [](NormBackwardArgs& a, Operands&) { a.gamma = {}; },
        fn + ": dgamma needs gamma (the forward's scale), but gamma is absent");
    reject(
        "dx", [](NormBackwardArgs& a, Operands& ops) { a.dx.data = ops.dy.data(); },
        fn + ": dx ([4, 8] bf16) must not overlap the input dy ([4, 8] bf16), but their memory "
             "ranges overlap");
    reject("dx", [](NormBackwardArgs& a, Operands& ops) { a.dx.data = static_cast<std::uint16_t*>(ops.x.data()) + 1; });
    reject("dx", [](NormBackwardArgs& a, Operands& ops) { a.dx.data = ops.gamma.data(); });
    reject("dx", [](NormBackwardArgs& a, Operands& ops) { a.dx.data = ops.rstd.data(); });
    reject("dgamma",
           [](NormBackwardArgs& a, Operands& ops) { a.dgamma.data = static_cast<float*>(ops.dx.data()) + 3; });
    reject("dgamma", [](NormBackwardArgs& a, Operands& ops) { a.dgamma.data = ops.gamma.data(); });
    if (!rms) {
      reject("mean", [](NormBackwardArgs& a, Operands&) { a.mean = {}; });
      reject("mean", [](NormBackwardArgs& a, Operands&) { a.mean.data = nullptr; });
      reject("dbeta dtype", [](NormBackwardArgs& a, Operands&) { a.dbeta.dtype = DType::bf16; });
      reject(
          "dbeta",
          [](NormBackwardArgs& a, Operands& ops) { a.dbeta.data = static_cast<float*>(ops.dgamma.data()) + 4; },
          fn + ": dgamma ([8] f32) must not overlap the output dbeta ([8] f32), but their memory "
               "ranges overlap");
      reject("dbeta", [](NormBackwardArgs& a, Operands& ops) { a.dbeta.data = ops.mean.data(); });
    }
  }
  expect_rejected(
      [](Operands& ops) {
        NormBackwardArgs a = ops.backward();
        a.mean = {};
        rms_norm_backward(a);
      },
      "rms_norm_backward", "dbeta");
  expect_rejected(
      [](Operands& ops) {
        NormBackwardArgs a = ops.backward();
        a.dbeta = {};
        rms_norm_backward(a);
      },
      "rms_norm_backward", "mean",
      "rms_norm_backward: mean must be absent for RMSNorm, which has no mean, but got [4] f32");
}

TEST(NormValidation, KernelNameRejectsUnsupportedDtypes) {
  Operands ops;
  NormForwardArgs f = ops.forward();
  f.gamma.dtype = DType::f16;
  f.beta.dtype = DType::f16;
  EXPECT_THROW(norm_kernel_name(NormKind::layer, f), Error);
  EXPECT_THROW(norm_kernel_statuses(NormKind::layer, f), Error);
  EXPECT_EQ(norm_check(NormKind::layer, f),
            "layer_norm_forward: gamma dtype must be x's dtype (bf16) or f32, but got f16");
  NormBackwardArgs b = ops.backward();
  b.dy.dtype = b.x.dtype = b.dx.dtype = DType::f16;
  b.dbeta = {};
  b.mean = {};
  EXPECT_NO_THROW(norm_kernel_name(NormKind::rms, b));
  EXPECT_EQ(norm_check(NormKind::rms, b), "");
  EXPECT_EQ(norm_check(NormKind::layer, ops.forward()), "");
}

// rows = 0: valid with null operands; forward writes nothing; backward sets dgamma/dbeta to 0,
// or leaves them unchanged when accumulating; dx and the statistics are empty.
TEST(NormValidation, ZeroRowsAndAbsentOutputsAreValid) {
  Operands ops;
  NormForwardArgs f;
  f.x = TensorView(nullptr, DType::f32, {0, kN});
  f.y = f.x;
  EXPECT_NO_THROW(layer_norm_forward(f));
  EXPECT_NO_THROW(rms_norm_forward(f));
  for (bool accumulate : {false, true}) {
    Operands o;
    std::mt19937_64 rng(3);
    o.dgamma.fill_normal(rng, 0.0, 1.0);
    o.dbeta.fill_normal(rng, 0.0, 1.0);
    const Buffer dgamma = o.dgamma, dbeta = o.dbeta;
    NormBackwardArgs b;
    b.dy = TensorView(nullptr, DType::bf16, {0, kN});
    b.gamma = TensorView(o.gamma.data(), DType::f32, {kN});
    b.dgamma = TensorView(o.dgamma.data(), DType::f32, {kN});
    b.dbeta = TensorView(o.dbeta.data(), DType::f32, {kN});
    b.accumulate = accumulate;
    layer_norm_backward(b);
    for (std::int64_t j = 0; j < kN; ++j) {
      EXPECT_EQ(o.dgamma.get(j), accumulate ? dgamma.get(j) : 0.0);
      EXPECT_EQ(o.dbeta.get(j), accumulate ? dbeta.get(j) : 0.0);
    }
  }
  // No output requested: nothing to do, nothing read.
  NormBackwardArgs none;
  EXPECT_NO_THROW(layer_norm_backward(none));
  EXPECT_NO_THROW(rms_norm_backward(none));
  // Forward without gamma/beta/mean/rstd.
  NormForwardArgs plain = ops.forward();
  plain.gamma = {};
  plain.beta = {};
  plain.mean = {};
  plain.rstd = {};
  EXPECT_NO_THROW(layer_norm_forward(plain));
  EXPECT_FALSE(std::isnan(ops.y.get(0)));
}

}  // namespace
}  // namespace ampkit
