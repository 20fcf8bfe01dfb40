// A deterministic random driver over the argument structs of gemm, norm, Linear and convert
// (issue 13's fuzz target, CI-sized): start from a small valid call, apply 0-3 random mutations
// (out-of-enum dtypes and kinds, negative, zero and 2^62 sizes and strides, null and aliased
// pointers, device memory, absent operands), and call. Every call must either run (and its
// *_check agree that it is valid) or throw ampkit::Error with exactly *_check's message and leave
// every byte of every buffer untouched — never crash, never throw anything else. Mutations never
// describe a larger valid operand than the buffers hold: huge values are 2^62, whose byte spans
// overflow int64. AMPKIT_FUZZ_ITERATIONS sets the calls per op (default 1500; seed printed).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/layers/linear.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/ops/norm.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

constexpr std::int64_t kHuge = std::int64_t{1} << 62;
constexpr std::size_t kSlotBytes = 16 * 1024;
constexpr int kSlots = 10;

int iterations() {
  const char* env = std::getenv("AMPKIT_FUZZ_ITERATIONS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 1500;
}

// Ten 16 KiB slots of random bytes: every operand of a call gets its own slot, so a base call is
// valid; mutations may point one operand at another's slot (aliasing).
struct Arena {
  std::vector<unsigned char> bytes = std::vector<unsigned char>(kSlots * kSlotBytes);
  explicit Arena(std::mt19937_64& rng) {
    for (std::size_t i = 0; i < bytes.size(); i += 4) {  // finite f32 (and finite bf16 halves)
      const float v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 256.0f;
      std::memcpy(&bytes[i], &v, 4);
    }
  }
  void* slot(int i) { return &bytes[static_cast<std::size_t>(i) * kSlotBytes]; }
};

struct Outcome {
  int accepted = 0, rejected = 0;
  // Prints the counts; a fuzz run that never got past validation, or never failed it, tested
  // nothing.
  void report(const char* op) const {
    std::printf("[   INFO   ] %s: %d calls accepted, %d rejected with a clear error\n", op, accepted, rejected);
    EXPECT_GT(accepted, 0) << op;
    EXPECT_GT(rejected, 0) << op;
  }
};

// Calls `call` (which runs the op) and `check` (its *_check); asserts the contract above.
void run_one(Arena& arena, const std::function<std::string()>& check, const std::function<void()>& call,
             const std::string& what, Outcome& outcome) {
  const std::string message = check();
  const std::vector<unsigned char> before = arena.bytes;
  try {
    call();
    ++outcome.accepted;
    EXPECT_EQ(message, "") << what << ": ran, but its check said: " << message;
  } catch (const Error& e) {
    ++outcome.rejected;
    EXPECT_EQ(message, e.what()) << what;
    EXPECT_TRUE(arena.bytes == before) << what << ": threw '" << e.what() << "' after writing";
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": threw a non-ampkit exception: " << e.what();
  }
}

DType random_dtype(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0: return DType::f32;
    case 1: return DType::bf16;
    case 2: return DType::f16;
    case 3: return DType::i32;
    default: return static_cast<DType>(4 + rng() % 250);
  }
}

std::int64_t bad_size(std::mt19937_64& rng) {
  const std::int64_t values[] = {-1, -kHuge, kHuge, 0};
  return values[rng() % 4];
}

// One random mutation of a view: an invalid or empty variant of it. `other` is another operand's
// memory (aliasing).
void mutate_view(TensorView& v, void* other, std::mt19937_64& rng, std::string& what) {
  switch (rng() % 9) {
    case 0:
      v = TensorView();
      what += " absent";
      break;
    case 1:
      v.data = nullptr;
      what += " null";
      break;
    case 2:
      v.dtype = random_dtype(rng);
      what += " dtype " + std::to_string(static_cast<int>(v.dtype));
      break;
    case 3:
      v.rank = rng() % 2 ? 9 : -1;
      what += " rank";
      break;
    case 4:
      if (v.rank > 0) v.shape[rng() % v.rank] = bad_size(rng);
      what += " shape";
      break;
    case 5:
      if (v.rank > 0) v.strides[rng() % v.rank] = rng() % 2 ? kHuge : -1;
      what += " stride";
      break;
    case 6:
      v.data = other;
      what += " aliased";
      break;
    case 7:
      v.device = Device::cuda;
      what += " cuda";
      break;
    default:
      v.device = static_cast<Device>(2 + rng() % 200);
      what += " device enum";
      break;
  }
}

TEST(ArgumentFuzz, Gemm) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Arena arena(rng);
  Outcome outcome;
  for (int it = 0; it < iterations(); ++it) {
    GemmArgs g;
    g.m = rng() % 9, g.n = rng() % 9, g.k = rng() % 9;
    g.op_a = rng() % 2 ? Op::T : Op::N, g.op_b = rng() % 2 ? Op::T : Op::N;
    const DType floats[] = {DType::f32, DType::bf16, DType::f16};
    g.a_dtype = floats[rng() % 3], g.b_dtype = floats[rng() % 3], g.d_dtype = floats[rng() % 3];
    g.c_dtype = g.d_dtype;
    g.a = arena.slot(0), g.b = arena.slot(1), g.c = arena.slot(2), g.d = arena.slot(3);
    g.lda = (g.op_a == Op::N ? g.m : g.k) + 1, g.ldb = (g.op_b == Op::N ? g.k : g.n) + 1;
    g.ldc = g.ldd = g.m + 1;
    g.beta = rng() % 2 ? 0.0f : 0.5f;
    g.epilogue.kind = static_cast<Epilogue>(rng() % 16);
    // The pointers the epilogue takes (the others must stay null).
    const Epilogue e = g.epilogue.kind;
    const bool bias = e == Epilogue::BIAS || e == Epilogue::RELU_BIAS || e == Epilogue::RELU_AUX_BIAS ||
                      e == Epilogue::GELU_BIAS || e == Epilogue::GELU_AUX_BIAS;
    const bool bias_grad =
        e == Epilogue::DGELU_BGRAD || e == Epilogue::DRELU_BGRAD || e == Epilogue::BGRADA || e == Epilogue::BGRADB;
    const bool aux = e == Epilogue::RELU_AUX || e == Epilogue::RELU_AUX_BIAS || e == Epilogue::GELU_AUX ||
                     e == Epilogue::GELU_AUX_BIAS || e == Epilogue::DGELU || e == Epilogue::DGELU_BGRAD ||
                     e == Epilogue::DRELU || e == Epilogue::DRELU_BGRAD;
    if (bias) g.epilogue.bias = arena.slot(4);
    if (bias_grad) g.epilogue.bias_grad = arena.slot(5);
    if (aux) g.epilogue.aux = arena.slot(6);
    g.epilogue.bias_dtype = rng() % 2 ? DType::f32 : g.d_dtype;
    g.epilogue.aux_dtype = rng() % 2 ? DType::f32 : g.d_dtype;
    g.epilogue.aux_ld = g.m + 1;
    g.fp16_mode = static_cast<Fp16Mode>(rng() % 3);
    EXPECT_EQ(gemm_check(g), "") << "the base call must be valid";
    std::string what = "gemm";
    const int mutations = static_cast<int>(rng() % 4);
    for (int i = 0; i < mutations; ++i) {
      switch (rng() % 12) {
        case 0:
          g.m = bad_size(rng);
          what += " m";
          break;
        case 1:
          g.n = bad_size(rng);
          what += " n";
          break;
        case 2:
          g.k = bad_size(rng);
          what += " k";
          break;
        case 3:
          g.lda = rng() % 2 ? 0 : kHuge;
          what += " lda";
          break;
        case 4:
          g.ldd = rng() % 2 ? -1 : kHuge;
          what += " ldd";
          break;
        case 5:
          g.a_dtype = random_dtype(rng);
          what += " a_dtype";
          break;
        case 6:
          g.d_dtype = random_dtype(rng);
          what += " d_dtype";
          break;
        case 7:
          g.epilogue.kind = static_cast<Epilogue>(16 + rng() % 240);
          what += " epilogue";
          break;
        case 8:
          g.fp16_mode = static_cast<Fp16Mode>(3 + rng() % 250);
          what += " fp16_mode";
          break;
        case 9:
          g.d = const_cast<void*>(g.a);
          what += " d aliases a";
          break;
        case 10:
          g.a = nullptr;
          what += " a null";
          break;
        default:
          g.epilogue.gelu = static_cast<GeluVariant>(2 + rng() % 200);
          what += " gelu";
          break;
      }
    }
    run_one(
        arena, [&] { return gemm_check(g); }, [&] { gemm(g); }, what, outcome);
  }
  outcome.report("gemm");
}

TEST(ArgumentFuzz, NormForwardAndBackward) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Arena arena(rng);
  Outcome outcome;
  for (int it = 0; it < iterations(); ++it) {
    const NormKind kind = rng() % 2 ? NormKind::layer : NormKind::rms;
    const std::int64_t rows = rng() % 5, n = 1 + rng() % 9;
    const DType floats[] = {DType::f32, DType::bf16, DType::f16};
    const DType t = floats[rng() % 3], p = rng() % 2 ? DType::f32 : t;
    std::string what = kind == NormKind::layer ? "layer_norm" : "rms_norm";
    if (rng() % 2) {
      NormForwardArgs a;
      a.x = TensorView(arena.slot(0), t, {rows, n});
      a.gamma = TensorView(arena.slot(1), p, {n});
      if (kind == NormKind::layer) a.beta = TensorView(arena.slot(2), p, {n});
      a.y = TensorView(arena.slot(3), t, {rows, n});
      if (kind == NormKind::layer) a.mean = TensorView(arena.slot(4), DType::f32, {rows});
      a.rstd = TensorView(arena.slot(5), DType::f32, {rows});
      TensorView* views[] = {&a.x, &a.gamma, &a.beta, &a.y, &a.mean, &a.rstd};
      const int mutations = static_cast<int>(rng() % 4);
      for (int i = 0; i < mutations; ++i) {
        if (rng() % 6 == 0) {
          a.normalized_rank = static_cast<int>(rng() % 4) - 1;
          what += " normalized_rank";
          continue;
        }
        mutate_view(*views[rng() % 6], arena.slot(static_cast<int>(rng() % 6)), rng, what);
      }
      what += " forward";
      run_one(
          arena, [&] { return norm_check(kind, a); },
          [&] { kind == NormKind::layer ? layer_norm_forward(a) : rms_norm_forward(a); }, what, outcome);
    } else {
      NormBackwardArgs a;
      a.dy = TensorView(arena.slot(0), t, {rows, n});
      a.x = TensorView(arena.slot(1), t, {rows, n});
      if (kind == NormKind::layer) a.mean = TensorView(arena.slot(2), DType::f32, {rows});
      a.rstd = TensorView(arena.slot(3), DType::f32, {rows});
      a.gamma = TensorView(arena.slot(4), p, {n});
      a.dx = TensorView(arena.slot(5), t, {rows, n});
      a.dgamma = TensorView(arena.slot(6), p, {n});
      if (kind == NormKind::layer) a.dbeta = TensorView(arena.slot(7), p, {n});
      a.accumulate = rng() % 2 != 0;
      TensorView* views[] = {&a.dy, &a.x, &a.mean, &a.rstd, &a.gamma, &a.dx, &a.dgamma, &a.dbeta};
      const int mutations = static_cast<int>(rng() % 4);
      for (int i = 0; i < mutations; ++i)
        mutate_view(*views[rng() % 8], arena.slot(static_cast<int>(rng() % 8)), rng, what);
      what += " backward";
      run_one(
          arena, [&] { return norm_check(kind, a); },
          [&] { kind == NormKind::layer ? layer_norm_backward(a) : rms_norm_backward(a); }, what, outcome);
    }
  }
  outcome.report("norm");
}

TEST(ArgumentFuzz, LinearForwardAndBackward) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Arena arena(rng);
  Outcome outcome;
  for (int it = 0; it < iterations(); ++it) {
    const std::int64_t batch = rng() % 5, in = 1 + rng() % 7, out = 1 + rng() % 7;
    const DType floats[] = {DType::f32, DType::bf16, DType::f16};
    const DType t = floats[rng() % 3];
    std::string what = "linear";
    if (rng() % 2) {
      LinearForwardArgs a;
      a.x = TensorView(arena.slot(0), t, {batch, in});
      a.w = TensorView(arena.slot(1), t, {out, in});
      a.bias = TensorView(arena.slot(2), DType::f32, {out});
      a.y = TensorView(arena.slot(3), t, {batch, out});
      a.gelu = rng() % 2 != 0;
      if (a.gelu) a.aux = TensorView(arena.slot(4), DType::f32, {batch, out});
      TensorView* views[] = {&a.x, &a.w, &a.bias, &a.y, &a.aux};
      const int mutations = static_cast<int>(rng() % 4);
      for (int i = 0; i < mutations; ++i) {
        if (rng() % 8 == 0) {
          a.fp16_mode = static_cast<Fp16Mode>(3 + rng() % 250);
          what += " fp16_mode";
          continue;
        }
        mutate_view(*views[rng() % 5], arena.slot(static_cast<int>(rng() % 5)), rng, what);
      }
      what += " forward";
      run_one(
          arena, [&] { return linear_check(a); }, [&] { linear_forward(a); }, what, outcome);
    } else {
      LinearBackwardArgs a;
      a.dy = TensorView(arena.slot(0), t, {batch, out});
      a.x = TensorView(arena.slot(1), t, {batch, in});
      a.w = TensorView(arena.slot(2), t, {out, in});
      a.dx = TensorView(arena.slot(3), t, {batch, in});
      a.dw = TensorView(arena.slot(4), DType::f32, {out, in});
      a.db = TensorView(arena.slot(5), DType::f32, {out});
      a.accumulate = rng() % 2 != 0;
      if (rng() % 2) {
        a.below_gelu = true;
        a.below_aux = TensorView(arena.slot(6), DType::f32, {batch, in});
        a.below_db = TensorView(arena.slot(7), DType::f32, {in});
      }
      TensorView* views[] = {&a.dy, &a.x, &a.w, &a.dx, &a.dw, &a.db, &a.below_aux, &a.below_db};
      const int mutations = static_cast<int>(rng() % 4);
      for (int i = 0; i < mutations; ++i)
        mutate_view(*views[rng() % 8], arena.slot(static_cast<int>(rng() % 8)), rng, what);
      what += " backward";
      run_one(
          arena, [&] { return linear_check(a); }, [&] { linear_backward(a); }, what, outcome);
    }
  }
  outcome.report("linear");
}

TEST(ArgumentFuzz, Convert) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  Arena arena(rng);
  Outcome outcome;
  const DType floats[] = {DType::f32, DType::bf16, DType::f16};
  for (int it = 0; it < iterations(); ++it) {
    const std::int64_t rows = rng() % 6, cols = 1 + rng() % 40;
    TensorView src(arena.slot(0), floats[rng() % 3], {rows, cols});
    TensorView dst(arena.slot(1), floats[rng() % 3], {rows, cols});
    std::string what = "convert";
    const int mutations = static_cast<int>(rng() % 4);
    for (int i = 0; i < mutations; ++i)
      mutate_view(rng() % 2 ? src : dst, arena.slot(static_cast<int>(rng() % 2)), rng, what);
    run_one(
        arena, [&] { return convert_check(src, dst); }, [&] { convert(src, dst); }, what, outcome);
  }
  outcome.report("convert");
}

}  // namespace
}  // namespace ampkit
