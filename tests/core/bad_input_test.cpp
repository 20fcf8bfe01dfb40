// The bad-input family (tests across the public API): for each public function a TABLE of
// invalid calls and the text the ampkit::Error message must contain (and its category), with
// every buffer of the fixture poisoned before and checked untouched after. Covers norm
// forward/backward, Linear forward/backward, convert (both forms), set_num_threads, set_isa_cap
// and resolve_fp16_mode, including the size overflows, invalid enum values and device memory
// that issue 13 found crashing or silently accepted. Grow the tables with every new entry point.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/layers/linear.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/norm.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using testing::Buffer;

constexpr std::int64_t kRows = 4, kN = 8, kBatch = 4, kIn = 6, kOut = 5;
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// Buffers of valid norm, Linear and convert calls; every one poisoned (NaN patterns), so a
// rejected call that writes anything shows up in the byte comparison.
struct Fixture {
  Buffer x{DType::bf16, kRows*kN}, y{DType::bf16, kRows*kN}, dy{DType::bf16, kRows*kN}, dx{DType::bf16, kRows*kN},
      gamma{DType::f32, kN}, beta{DType::f32, kN}, dgamma{DType::f32, kN}, dbeta{DType::f32, kN},
      mean{DType::f32, kRows}, rstd{DType::f32, kRows};
  Buffer lx{DType::f32, kBatch*kIn}, lw{DType::bf16, kOut*kIn}, lbias{DType::f32, kOut}, ly{DType::bf16, kBatch*kOut},
      laux{DType::bf16, kBatch*kOut}, ldy{DType::bf16, kBatch*kOut}, ldx{DType::f32, kBatch*kIn},
      ldw{DType::bf16, kOut*kIn}, ldb{DType::f32, kOut}, lbelow_aux{DType::f32, kBatch*kIn}, lbelow_db{DType::f32, kIn};
  Buffer src{DType::f32, 64}, dst{DType::f16, 64};

  std::vector<Buffer*> all() {
    return {&x,     &y,  &dy,   &dx,  &gamma, &beta, &dgamma, &dbeta,      &mean,      &rstd, &lx, &lw,
            &lbias, &ly, &laux, &ldy, &ldx,   &ldw,  &ldb,    &lbelow_aux, &lbelow_db, &src,  &dst};
  }
  Fixture() {
    for (Buffer* b : all()) b->poison();
  }
  std::vector<ampkit::testing::Bytes> snapshot() {
    std::vector<ampkit::testing::Bytes> s;
    for (Buffer* b : all()) s.push_back(b->bytes);
    return s;
  }

  NormForwardArgs norm_forward() {
    NormForwardArgs a;
    a.x = TensorView(x.data(), DType::bf16, {kRows, kN});
    a.gamma = TensorView(gamma.data(), DType::f32, {kN});
    a.beta = TensorView(beta.data(), DType::f32, {kN});
    a.y = TensorView(y.data(), DType::bf16, {kRows, kN});
    a.mean = TensorView(mean.data(), DType::f32, {kRows});
    a.rstd = TensorView(rstd.data(), DType::f32, {kRows});
    return a;
  }
  NormBackwardArgs norm_backward() {
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
  LinearForwardArgs linear_forward_args() {
    LinearForwardArgs a;
    a.x = TensorView(lx.data(), DType::f32, {kBatch, kIn});
    a.w = TensorView(lw.data(), DType::bf16, {kOut, kIn});
    a.bias = TensorView(lbias.data(), DType::f32, {kOut});
    a.y = TensorView(ly.data(), DType::bf16, {kBatch, kOut});
    a.gelu = true;
    a.aux = TensorView(laux.data(), DType::bf16, {kBatch, kOut});
    return a;
  }
  LinearBackwardArgs linear_backward_args() {
    LinearBackwardArgs a;
    a.dy = TensorView(ldy.data(), DType::bf16, {kBatch, kOut});
    a.x = TensorView(lx.data(), DType::f32, {kBatch, kIn});
    a.w = TensorView(lw.data(), DType::bf16, {kOut, kIn});
    a.dx = TensorView(ldx.data(), DType::f32, {kBatch, kIn});
    a.dw = TensorView(ldw.data(), DType::bf16, {kOut, kIn});
    a.db = TensorView(ldb.data(), DType::f32, {kOut});
    a.below_gelu = true;
    a.below_aux = TensorView(lbelow_aux.data(), DType::f32, {kBatch, kIn});
    a.below_db = TensorView(lbelow_db.data(), DType::f32, {kIn});
    return a;
  }
};

// One invalid call: what it does to a valid call, and what the Error must say.
struct BadCall {
  const char* case_name;
  std::function<void(Fixture&)> call;
  const char* message;  // must be contained in e.what()
  ErrorKind kind = ErrorKind::invalid_argument;
};

// Runs every call of the table: each must throw an Error of the given kind whose message
// starts with "<function>: " and contains the expected text, and leave every buffer untouched.
void run_table(const char* function, const std::vector<BadCall>& table) {
  for (const BadCall& bad : table) {
    SCOPED_TRACE(std::string(function) + " / " + bad.case_name);
    Fixture f;
    const auto before = f.snapshot();
    try {
      bad.call(f);
      ADD_FAILURE() << "accepted; expected an Error containing '" << bad.message << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(std::string(function) + ": ", 0), 0u) << message;
      EXPECT_NE(message.find(bad.message), std::string::npos)
          << "message: " << message << "\nexpected to contain: " << bad.message;
      EXPECT_EQ(e.kind(), bad.kind) << message;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw a non-ampkit exception: " << e.what();
    }
    EXPECT_TRUE(f.snapshot() == before) << "a rejected call wrote a buffer";
  }
}

// A [rows, n] view over a buffer that is too small on purpose (the constructor would reject the
// shape): validation must reject the call before any byte is touched.
TensorView huge(void* data, DType t, std::int64_t rows, std::int64_t n) {
  TensorView v(data, t, {0, 1});
  v.shape = {rows, n};
  v.strides = {n, 1};
  return v;
}

// The same for a vector of n elements.
TensorView huge(void* data, DType t, std::int64_t n) {
  TensorView v(data, t, {0});
  v.shape = {n};
  v.strides = {1};
  return v;
}

std::function<void(Fixture&)> norm_fwd(void (*fn)(const NormForwardArgs&),
                                       std::function<void(NormForwardArgs&, Fixture&)> edit) {
  return [fn, edit](Fixture& f) {
    NormForwardArgs a = f.norm_forward();
    edit(a, f);
    fn(a);
  };
}

TEST(BadInput, LayerNormForward) {
  using E = std::function<void(NormForwardArgs&, Fixture&)>;
  auto call = [](E edit) { return norm_fwd(layer_norm_forward, edit); };
  run_table(
      "layer_norm_forward",
      {
          {"x absent", call([](auto& a, auto&) { a.x = {}; }), "x must be given"},
          {"x dtype i32", call([](auto& a, auto&) { a.x.dtype = DType::i32; }),
           "x dtype must be f32, bf16 or f16, but got i32"},
          {"x dtype out of enum", call([](auto& a, auto&) { a.x.dtype = static_cast<DType>(9); }),
           "x dtype must be f32, bf16 or f16, but got the value 9"},
          {"y dtype out of enum", call([](auto& a, auto&) { a.y.dtype = static_cast<DType>(200); }),
           "y dtype must be f32, bf16 or f16, but got the value 200"},
          {"gamma dtype out of enum", call([](auto& a, auto&) { a.gamma.dtype = static_cast<DType>(4); }),
           "the value 4"},
          {"x rank 9", call([](auto& a, auto&) { a.x.rank = 9; }), "x rank must be in [0, 8]"},
          {"x rank -1", call([](auto& a, auto&) { a.x.rank = -1; }), "x rank must be in [0, 8]"},
          {"x negative dim", call([](auto& a, auto&) { a.x.shape[1] = -8; }), "x dimension 1 must be >= 0, but got -8"},
          {"x in device memory", call([](auto& a, auto&) { a.x.device = Device::cuda; }), "x is in cuda:0 memory",
           ErrorKind::unsupported},
          {"y in device memory", call([](auto& a, auto&) { a.y.device = Device::cuda; }), "y is in cuda:0 memory",
           ErrorKind::unsupported},
          {"x not contiguous", call([](auto& a, auto&) { a.x.strides[0] = 16; }),
           "x must be row-major contiguous, but its shape [4, 8] has strides [16, 1]"},
          {"rows = 0, n = 2^62", call([](auto& a, auto& f) {
             a.x = huge(f.x.data(), DType::bf16, 0, std::int64_t{1} << 62);
             a.y = huge(f.y.data(), DType::bf16, 0, std::int64_t{1} << 62);
             a.gamma = {};
             a.beta = {};
           }),
           "x [0, 4611686018427387904] is too large"},
          {"rows * n overflows", call([](auto& a, auto& f) {
             a.x = huge(f.x.data(), DType::bf16, std::int64_t{1} << 40, std::int64_t{1} << 30);
           }),
           "has more elements than int64 can count"},
          {"x bytes overflow",
           call([](auto& a, auto& f) { a.x = huge(f.x.data(), DType::f32, 1, std::int64_t{1} << 62); }),
           "its byte size overflows int64"},
          {"y shape", call([](auto& a, auto& f) {
             a.y = TensorView(f.y.data(), DType::bf16, {kRows, kN + 1});
           }),
           "y must have x's shape [4, 8], but got [4, 9]"},
          {"gamma shape", call([](auto& a, auto& f) {
             a.gamma = TensorView(f.gamma.data(), DType::f32, {kN, 1});
           }),
           "gamma must have x's normalized dims [8], but got [8, 1]"},
          {"normalized_rank 0", call([](auto& a, auto&) { a.normalized_rank = 0; }),
           "normalized_rank must be in [1, x's rank 2], but got 0"},
          {"mean dtype", call([](auto& a, auto&) { a.mean.dtype = DType::bf16; }),
           "mean dtype must be f32, but got bf16"},
          {"rstd shape", call([](auto& a, auto& f) { a.rstd = TensorView(f.rstd.data(), DType::f32, {kRows + 1}); }),
           "rstd must have shape [4] (one value per row of x) or x's leading dims, but got [5]"},
          {"eps NaN", call([](auto& a, auto&) { a.eps = std::numeric_limits<float>::quiet_NaN(); }),
           "eps must be finite and >= 0"},
          {"x null", call([](auto& a, auto&) { a.x.data = nullptr; }),
           "x must point to [4, 8] bf16 elements, but got null"},
          {"y overlaps x", call([](auto& a, auto& f) { a.y.data = f.x.data(); }),
           "y ([4, 8] bf16) must not overlap the input x ([4, 8] bf16)"},
      });
}

TEST(BadInput, RmsNormForward) {
  using E = std::function<void(NormForwardArgs&, Fixture&)>;
  auto call = [](E edit) {
    return norm_fwd(rms_norm_forward, [edit](NormForwardArgs& a, Fixture& f) {
      a.beta = {};
      a.mean = {};
      edit(a, f);
    });
  };
  run_table("rms_norm_forward",
            {
                {"beta given", call([](auto& a, auto& f) { a.beta = TensorView(f.beta.data(), DType::f32, {kN}); }),
                 "beta must be absent for RMSNorm"},
                {"mean given", call([](auto& a, auto& f) { a.mean = TensorView(f.mean.data(), DType::f32, {kRows}); }),
                 "mean must be absent for RMSNorm"},
                {"x dtype out of enum", call([](auto& a, auto&) { a.x.dtype = static_cast<DType>(3 + 4); }),
                 "x dtype must be f32, bf16 or f16, but got the value 7"},
            });
}

TEST(BadInput, LayerNormBackward) {
  using E = std::function<void(NormBackwardArgs&, Fixture&)>;
  auto call = [](E edit) {
    return [edit](Fixture& f) {
      NormBackwardArgs a = f.norm_backward();
      edit(a, f);
      layer_norm_backward(a);
    };
  };
  run_table("layer_norm_backward",
            {
                {"rows = 0, n = 2^61 + 1, dgamma", call([](auto& a, auto& f) {
                   const std::int64_t n = (std::int64_t{1} << 61) + 1;
                   a = NormBackwardArgs{};
                   a.dy = huge(f.dy.data(), DType::f32, 0, n);
                   a.gamma = huge(f.gamma.data(), DType::f32, n);
                   a.dgamma = huge(f.dgamma.data(), DType::f32, n);
                 }),
                 "dy [0, 2305843009213693953] is too large"},
                {"dy absent with outputs", call([](auto& a, auto&) { a.dy = {}; }), "dy must be given"},
                {"dy dtype out of enum", call([](auto& a, auto&) { a.dy.dtype = static_cast<DType>(200); }),
                 "dy dtype must be f32, bf16 or f16, but got the value 200"},
                {"dgamma dtype out of enum", call([](auto& a, auto&) { a.dgamma.dtype = static_cast<DType>(5); }),
                 "the value 5"},
                {"dgamma without gamma", call([](auto& a, auto&) { a.gamma = {}; }),
                 "dgamma needs gamma (the forward's scale), but gamma is absent"},
                {"x shape", call([](auto& a, auto& f) { a.x = TensorView(f.x.data(), DType::bf16, {kRows * kN}); }),
                 "x must have dy's shape [4, 8], but got [32]"},
                {"dx in device memory", call([](auto& a, auto&) { a.dx.device = Device::cuda; }),
                 "dx is in cuda:0 memory", ErrorKind::unsupported},
                {"rstd absent", call([](auto& a, auto&) { a.rstd = {}; }),
                 "rstd must be given (values from the forward, needed for dx), but it is absent"},
                {"mean null", call([](auto& a, auto&) { a.mean.data = nullptr; }),
                 "mean must point to [4] f32 values from the forward (needed for dx), but got null"},
                {"dbeta overlaps dgamma", call([](auto& a, auto&) { a.dbeta.data = a.dgamma.data; }),
                 "dgamma ([8] f32) must not overlap the output dbeta ([8] f32)"},
            });
}

TEST(BadInput, RmsNormBackward) {
  run_table("rms_norm_backward", {
                                     {"dbeta given",
                                      [](Fixture& f) {
                                        NormBackwardArgs a = f.norm_backward();
                                        a.mean = {};
                                        rms_norm_backward(a);
                                      },
                                      "dbeta must be absent for RMSNorm"},
                                     {"mean given",
                                      [](Fixture& f) {
                                        NormBackwardArgs a = f.norm_backward();
                                        a.dbeta = {};
                                        rms_norm_backward(a);
                                      },
                                      "mean must be absent for RMSNorm"},
                                 });
}

TEST(BadInput, LinearForward) {
  using E = std::function<void(LinearForwardArgs&, Fixture&)>;
  auto call = [](E edit) {
    return [edit](Fixture& f) {
      LinearForwardArgs a = f.linear_forward_args();
      edit(a, f);
      linear_forward(a);
    };
  };
  run_table(
      "linear_forward",
      {
          {"x absent", call([](auto& a, auto&) { a.x = {}; }), "x must be given"},
          {"x rank 0", call([](auto& a, auto& f) { a.x = TensorView(f.lx.data(), DType::f32, {}); }),
           "x must have rank >= 1 ([..., in_features]), but got []"},
          {"x dtype i32", call([](auto& a, auto&) { a.x.dtype = DType::i32; }),
           "x dtype must be f32, bf16 or f16, but got i32"},
          {"w dtype out of enum", call([](auto& a, auto&) { a.w.dtype = static_cast<DType>(11); }),
           "w dtype must be f32, bf16 or f16, but got the value 11"},
          {"w in_features", call([](auto& a, auto& f) {
             a.w = TensorView(f.lw.data(), DType::bf16, {kIn, kOut});
           }),
           "w must have shape [out_features, 6] (in_features from x [4, 6]), but got [6, 5]"},
          {"y shape", call([](auto& a, auto& f) {
             a.y = TensorView(f.ly.data(), DType::bf16, {kBatch, 1, kOut});
           }),
           "y must have shape [..., out_features] = [4, 5], but got [4, 1, 5]"},
          {"bias shape", call([](auto& a, auto& f) { a.bias = TensorView(f.lbias.data(), DType::f32, {kOut - 1}); }),
           "bias must have shape [out_features] = [5], but got [4]"},
          {"bias dtype i32", call([](auto& a, auto&) { a.bias.dtype = DType::i32; }),
           "bias dtype must be f32, bf16 or f16, but got i32"},
          {"fp16_mode out of enum", call([](auto& a, auto&) { a.fp16_mode = static_cast<Fp16Mode>(7); }),
           "fp16_mode must be exact, flush or alt, but got the value 7"},
          {"gelu_variant out of enum", call([](auto& a, auto&) { a.gelu_variant = static_cast<GeluVariant>(2); }),
           "gelu_variant must be tanh or erf, but got the value 2"},
          {"aux without gelu", call([](auto& a, auto&) { a.gelu = false; }), "aux is only written with gelu = true"},
          {"y in device memory", call([](auto& a, auto&) { a.y.device = Device::cuda; }), "y is in cuda:0 memory",
           ErrorKind::unsupported},
          {"y overlaps w", call([](auto& a, auto& f) { a.y.data = f.lw.data(); }),
           "y ([4, 5] bf16) must not overlap the input w ([5, 6] bf16)"},
          {"x bytes overflow",
           call([](auto& a, auto& f) { a.x = huge(f.lx.data(), DType::f32, std::int64_t{1} << 61, kIn); }),
           "has more elements than int64 can count"},
      });
}

TEST(BadInput, LinearBackward) {
  using E = std::function<void(LinearBackwardArgs&, Fixture&)>;
  auto call = [](E edit) {
    return [edit](Fixture& f) {
      LinearBackwardArgs a = f.linear_backward_args();
      edit(a, f);
      linear_backward(a);
    };
  };
  run_table("linear_backward",
            {
                {"dy absent", call([](auto& a, auto&) { a.dy = {}; }), "dy must be given"},
                {"dy dtype out of enum", call([](auto& a, auto&) { a.dy.dtype = static_cast<DType>(6); }),
                 "dy dtype must be f32, bf16 or f16, but got the value 6"},
                {"below_db without below_gelu", call([](auto& a, auto&) { a.below_gelu = false; }),
                 "below_db (the layer below's bias gradient) needs below_gelu = true"},
                {"dx shape", call([](auto& a, auto& f) {
                   a.dx = TensorView(f.ldx.data(), DType::f32, {kBatch, kIn - 1});
                 }),
                 "dx must have shape [..., in_features] = [4, 6], but got [4, 5]"},
                {"db shape", call([](auto& a, auto& f) { a.db = TensorView(f.ldb.data(), DType::f32, {kIn}); }),
                 "db must have shape [out_features] = [5], but got [6]"},
                {"w absent for dx", call([](auto& a, auto&) { a.w = {}; }),
                 "w must be given ([out_features, in_features], needed for dx)"},
                {"fp16_mode out of enum", call([](auto& a, auto&) { a.fp16_mode = static_cast<Fp16Mode>(3); }),
                 "fp16_mode must be exact, flush or alt, but got the value 3"},
                {"dw overlaps x", call([](auto& a, auto& f) { a.dw.data = f.lx.data(); }),
                 "dw ([5, 6] bf16) must not overlap the input x ([4, 6] f32)"},
                {"dw in device memory", call([](auto& a, auto&) { a.dw.device = Device::cuda; }),
                 "dw is in cuda:0 memory", ErrorKind::unsupported},
            });
}

TEST(BadInput, Convert) {
  run_table(
      "convert",
      {
          {"n = 2^62 f32",
           [](Fixture& f) { convert(f.src.data(), DType::f32, f.dst.data(), DType::f16, std::int64_t{1} << 62); },
           "whose byte size overflows int64"},
          {"n = INT64_MAX f16 -> f32",
           [](Fixture& f) { convert(f.dst.data(), DType::f16, f.src.data(), DType::f32, kMax); },
           "whose byte size overflows int64"},
          {"src dtype out of enum",
           [](Fixture& f) { convert(f.src.data(), static_cast<DType>(7), f.dst.data(), DType::f16, 4); },
           "src dtype must be f32, bf16 or f16, but got the value 7"},
          {"dst dtype out of enum",
           [](Fixture& f) { convert(f.src.data(), DType::f32, f.dst.data(), static_cast<DType>(255), 4); },
           "dst dtype must be f32, bf16 or f16, but got the value 255"},
          {"both dtypes out of enum",
           [](Fixture& f) { convert(f.src.data(), static_cast<DType>(8), f.dst.data(), static_cast<DType>(8), 4); },
           "src dtype must be f32, bf16 or f16, but got the value 8"},
          {"dst dtype i32", [](Fixture& f) { convert(f.src.data(), DType::f32, f.dst.data(), DType::i32, 4); },
           "dst dtype must be f32, bf16 or f16, but got i32"},
          {"n < 0", [](Fixture& f) { convert(f.src.data(), DType::f32, f.dst.data(), DType::f16, -3); },
           "n must be >= 0, but got -3"},
          {"src null", [](Fixture& f) { convert(nullptr, DType::f32, f.dst.data(), DType::f16, 4); },
           "src is null with n = 4"},
          {"partial overlap",
           [](Fixture& f) { convert(f.src.data(), DType::f32, static_cast<char*>(f.src.data()) + 2, DType::f16, 4); },
           "dst must not overlap src"},
          {"views: shapes differ",
           [](Fixture& f) {
             convert(TensorView(f.src.data(), DType::f32, {4, 8}), TensorView(f.dst.data(), DType::f16, {4, 9}));
           },
           "dst must have src's shape [4, 8], but got [4, 9]"},
          {"views: dst absent",
           [](Fixture& f) {
             convert(TensorView(f.src.data(), DType::f32, {4, 8}), TensorView());
           },
           "dst must be given"},
          {"views: src in device memory",
           [](Fixture& f) {
             convert(TensorView(f.src.data(), DType::f32, {4, 8}, Device::cuda),
                     TensorView(f.dst.data(), DType::f16, {4, 8}));
           },
           "src is in cuda:0 memory", ErrorKind::unsupported},
          {"views: dst not contiguous",
           [](Fixture& f) {
             TensorView dst(f.dst.data(), DType::f16, {4, 8});
             dst.strides = {16, 2};
             convert(TensorView(f.src.data(), DType::f32, {4, 8}), dst);
           },
           "dst must be row-major contiguous"},
          {"views: src dtype out of enum",
           [](Fixture& f) {
             convert(TensorView(f.src.data(), static_cast<DType>(9), {4}), TensorView(f.dst.data(), DType::f16, {4}));
           },
           "src dtype must be f32, bf16 or f16, but got the value 9"},
      });
}

TEST(BadInput, SetNumThreads) {
  const int before = num_threads();
  run_table("set_num_threads", {
                                   {"0", [](Fixture&) { set_num_threads(0); }, "n must be in [1, 1024], but got 0"},
                                   {"-1", [](Fixture&) { set_num_threads(-1); }, "but got -1"},
                                   {"1025", [](Fixture&) { set_num_threads(kMaxThreads + 1); }, "but got 1025"},
                                   {"1000000", [](Fixture&) { set_num_threads(1000000); }, "but got 1000000"},
                               });
  EXPECT_EQ(num_threads(), before);
}

TEST(BadInput, SetIsaCap) {
  const Isa before = active_isa();
  run_table("set_isa_cap",
            {
                {"-1", [](Fixture&) { set_isa_cap(static_cast<Isa>(-1)); },
                 "isa must be ref, avx2, avx512 or amx, but got the value -1"},
                {"4", [](Fixture&) { set_isa_cap(static_cast<Isa>(4)); }, "but got the value 4"},
                {"1000", [](Fixture&) { set_isa_cap(static_cast<Isa>(1000)); }, "but got the value 1000"},
            });
  EXPECT_EQ(active_isa(), before);
}

TEST(BadInput, ResolveFp16Mode) {
  run_table("resolve_fp16_mode",
            {
                {"model out of enum",
                 [](Fixture&) { resolve_fp16_mode(AltImplChoice::per_pass, false, static_cast<Fp16DeviceModel>(7)); },
                 "model must be cpu or mi200, but got the value 7"},
                {"choice out of enum",
                 [](Fixture&) { resolve_fp16_mode(static_cast<AltImplChoice>(9), true, Fp16DeviceModel::cpu); },
                 "choice must be per_pass, original or alternate, but got the value 9"},
            });
}

// The non-throwing checks return the same message the call throws, for a sample of the tables.
TEST(BadInput, ChecksReturnTheMessageOfTheCall) {
  Fixture f;
  NormForwardArgs nf = f.norm_forward();
  nf.x.dtype = static_cast<DType>(9);
  EXPECT_EQ(norm_check(NormKind::layer, nf),
            "layer_norm_forward: x dtype must be f32, bf16 or f16, but got the value 9");
  EXPECT_EQ(norm_check(static_cast<NormKind>(4), f.norm_forward()),
            "layer_norm_forward: kind must be layer or rms, but got the value 4");
  NormBackwardArgs nb = f.norm_backward();
  nb.gamma = {};
  EXPECT_EQ(norm_check(NormKind::layer, nb),
            "layer_norm_backward: dgamma needs gamma (the forward's scale), but gamma is absent");
  LinearForwardArgs lf = f.linear_forward_args();
  lf.y.device = Device::cuda;
  // Linear runs on cuda too: without a GPU it says why, with one that x is in cpu memory.
  EXPECT_EQ(linear_check(lf).rfind("linear_forward: y is in cuda:0 memory, but ", 0), 0u) << linear_check(lf);
  EXPECT_EQ(convert_check(TensorView(f.src.data(), DType::f32, {2}), TensorView()),
            "convert: dst must be given (the output, src's shape), but it is absent");
  EXPECT_EQ(convert_check(TensorView(f.src.data(), DType::f32, {2}), TensorView(f.dst.data(), DType::f16, {2})), "");
}

}  // namespace
}  // namespace ampkit
