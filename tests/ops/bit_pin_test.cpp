// Bit pins (issue 7's "bit-identical before and after a refactor"): every op family runs a fixed
// set of calls on fixed inputs at every ISA this machine has, and a 64-bit hash of all the
// output bytes must equal the one recorded in tests/ops/bit_pins.txt. A change that is meant to
// change numerics re-records the pins (the file says how); any other change that moves one bit
// fails here, naming the family and ISA.
//
// Lines of the pin file: `isa family vendor hash`. vendor is `any`, or the CPU vendor the hash
// was recorded on where the bits come from instructions whose rounding the vendor defines
// (vdpbf16ps, the AMX tile unit); such a line is skipped, visibly, on another vendor's CPU.
#include <cpuid.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/attention.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/embedding.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/ops/norm.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "ampkit/ops/softmax_cross_entropy.hpp"
#include "support/test_support.hpp"

#if !defined(AMPKIT_BIT_PIN_FILE) || !defined(AMPKIT_BIT_PIN_BUILD)
#error "AMPKIT_BIT_PIN_FILE and AMPKIT_BIT_PIN_BUILD come from tests/CMakeLists.txt"
#endif

namespace ampkit {
namespace {

using std::int64_t;
using testing::Buffer;

// FNV-1a over bytes, folded over every output of a family in call order.
struct Hash {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  }
  void add(const Buffer& b) { add(b.data(), b.bytes.size()); }
};

// Inputs: the same values on every run and machine (fixed seed, rounded to the dtype).
Buffer filled(DType t, int64_t n, std::uint64_t seed, double stddev = 1.0) {
  std::mt19937_64 rng(seed);
  Buffer b(t, n);
  b.fill_normal(rng, 0.0, stddev);
  return b;
}
Buffer zeros(DType t, int64_t n) { return Buffer(t, n); }

TensorView view(Buffer& b, std::initializer_list<int64_t> shape) { return TensorView(b.data(), b.dtype, shape); }

constexpr DType kFloat[] = {DType::f32, DType::bf16, DType::f16};

// GEMM: every epilogue family on the blocked and the skinny engines, op(A)/op(B) both ways.
void gemm_family(Hash& hash, bool sixteen_bit) {
  struct Case {
    Epilogue kind;
    Op op_a, op_b;
    int64_t m, n, k;
  };
  const Case cases[] = {
      {Epilogue::DEFAULT, Op::N, Op::N, 67, 45, 70},       {Epilogue::BIAS, Op::T, Op::N, 96, 80, 72},
      {Epilogue::GELU_AUX_BIAS, Op::T, Op::N, 64, 40, 96}, {Epilogue::DGELU_BGRAD, Op::N, Op::N, 48, 64, 40},
      {Epilogue::BGRADB, Op::N, Op::T, 40, 48, 130},       {Epilogue::DEFAULT, Op::T, Op::N, 5, 64, 80},
      {Epilogue::BIAS, Op::N, Op::N, 64, 3, 50},
  };
  const std::vector<DType> dtypes = sixteen_bit ? std::vector<DType>{DType::bf16, DType::f16} : std::vector{DType::f32};
  std::uint64_t seed = 1;
  for (DType t : dtypes)
    for (const Case& c : cases) {
      const int64_t a_rows = c.op_a == Op::N ? c.m : c.k, a_cols = c.op_a == Op::N ? c.k : c.m;
      const int64_t b_rows = c.op_b == Op::N ? c.k : c.n, b_cols = c.op_b == Op::N ? c.n : c.k;
      Buffer a = filled(t, a_rows * a_cols, ++seed), b = filled(t, b_rows * b_cols, ++seed);
      Buffer d = zeros(t, c.m * c.n), aux = filled(t, c.m * c.n, ++seed), bias = filled(DType::f32, c.m, ++seed);
      Buffer bias_grad = zeros(DType::f32, c.kind == Epilogue::BGRADB ? c.n : c.m);
      GemmArgs g;
      g.op_a = c.op_a;
      g.op_b = c.op_b;
      g.m = c.m;
      g.n = c.n;
      g.k = c.k;
      g.a = a.data();
      g.a_dtype = t;
      g.lda = a_rows;
      g.b = b.data();
      g.b_dtype = t;
      g.ldb = b_rows;
      g.d = d.data();
      g.d_dtype = t;
      g.ldd = c.m;
      g.epilogue.kind = c.kind;
      if (c.kind == Epilogue::BIAS || c.kind == Epilogue::GELU_AUX_BIAS) g.epilogue.bias = bias.data();
      if (c.kind == Epilogue::GELU_AUX_BIAS || c.kind == Epilogue::DGELU_BGRAD) {
        g.epilogue.aux = aux.data();
        g.epilogue.aux_dtype = t;
        g.epilogue.aux_ld = c.m;
      }
      if (c.kind == Epilogue::DGELU_BGRAD || c.kind == Epilogue::BGRADB) g.epilogue.bias_grad = bias_grad.data();
      for (Fp16Mode mode : {Fp16Mode::exact, Fp16Mode::alt}) {
        if (mode == Fp16Mode::alt && t != DType::f16) continue;
        g.fp16_mode = mode;
        gemm(g);
        hash.add(d);
        hash.add(aux);
        hash.add(bias_grad);
      }
    }
}

// LayerNorm and RMSNorm, forward and backward, every dtype mix, a short and a long row.
void norm_family(Hash& hash) {
  std::uint64_t seed = 100;
  for (NormKind kind : {NormKind::layer, NormKind::rms})
    for (DType t : kFloat)
      for (DType p : {t, DType::f32})
        for (int64_t n : {56, 300}) {
          if (p == DType::f32 && t == DType::f32 && n == 56) continue;
          const int64_t rows = 37;
          Buffer x = filled(t, rows * n, ++seed), y = zeros(t, rows * n), dy = filled(t, rows * n, ++seed);
          Buffer gamma = filled(p, n, ++seed), beta = filled(p, n, ++seed), dx = zeros(t, rows * n);
          Buffer dgamma = zeros(p, n), dbeta = zeros(p, n), mean = zeros(DType::f32, rows),
                 rstd = zeros(DType::f32, rows);
          const bool layer = kind == NormKind::layer;
          NormForwardArgs f;
          f.x = view(x, {rows, n});
          f.gamma = view(gamma, {n});
          if (layer) f.beta = view(beta, {n});
          f.y = view(y, {rows, n});
          if (layer) f.mean = view(mean, {rows});
          f.rstd = view(rstd, {rows});
          layer ? layer_norm_forward(f) : rms_norm_forward(f);
          NormBackwardArgs b;
          b.dy = view(dy, {rows, n});
          b.x = f.x;
          b.mean = f.mean;
          b.rstd = f.rstd;
          b.gamma = f.gamma;
          b.dx = view(dx, {rows, n});
          b.dgamma = view(dgamma, {n});
          if (layer) b.dbeta = view(dbeta, {n});
          layer ? layer_norm_backward(b) : rms_norm_backward(b);
          for (const Buffer* out : {&y, &mean, &rstd, &dx, &dgamma, &dbeta}) hash.add(*out);
        }
}

// Causal attention forward and backward, each operand dtype, two head sizes.
void attention_family(Hash& hash) {
  std::uint64_t seed = 200;
  for (DType t : kFloat)
    for (int64_t head_dim : {16, 40}) {
      const int64_t batch = 2, seq = 37, heads = 2, width = heads * head_dim, count = batch * seq * width;
      Buffer q = filled(t, count, ++seed), k = filled(t, count, ++seed), v = filled(t, count, ++seed);
      Buffer out = zeros(t, count), lse = zeros(DType::f32, batch * heads * seq), dout = filled(t, count, ++seed);
      Buffer dq = zeros(t, count), dk = zeros(t, count), dv = zeros(t, count);
      AttentionForwardArgs f;
      f.q = view(q, {batch, seq, width});
      f.k = view(k, {batch, seq, width});
      f.v = view(v, {batch, seq, width});
      f.out = view(out, {batch, seq, width});
      f.lse = view(lse, {batch, heads, seq});
      f.heads = static_cast<int>(heads);
      attention_forward(f);
      AttentionBackwardArgs b;
      b.q = f.q;
      b.k = f.k;
      b.v = f.v;
      b.out = f.out;
      b.lse = f.lse;
      b.dout = view(dout, {batch, seq, width});
      b.dq = view(dq, {batch, seq, width});
      b.dk = view(dk, {batch, seq, width});
      b.dv = view(dv, {batch, seq, width});
      b.heads = f.heads;
      attention_backward(b);
      for (const Buffer* o : {&out, &lse, &dq, &dk, &dv}) hash.add(*o);
    }
}

// GELU, elementwise ops, softmax cross-entropy, convert, embedding and the optimizer steps.
void pointwise_family(Hash& hash) {
  std::uint64_t seed = 300;
  const int64_t rows = 13, cols = 75, count = rows * cols;
  for (DType t : kFloat) {
    Buffer x = filled(t, count, ++seed, 3.0), dy = filled(t, count, ++seed), y = zeros(t, count), dx = zeros(t, count);
    for (GeluVariant g : {GeluVariant::tanh, GeluVariant::erf}) {
      gelu_forward(view(x, {rows, cols}), view(y, {rows, cols}), g);
      gelu_backward(view(x, {rows, cols}), view(dy, {rows, cols}), view(dx, {rows, cols}), g);
      hash.add(y);
      hash.add(dx);
    }
    Buffer row = filled(t, cols, ++seed), sums = zeros(DType::f32, cols);
    add(view(x, {rows, cols}), view(dy, {rows, cols}), view(y, {rows, cols}));
    hash.add(y);
    add_accumulate(view(x, {rows, cols}), view(y, {rows, cols}));
    hash.add(y);
    add_row_vector(view(x, {rows, cols}), view(row, {cols}), view(y, {rows, cols}));
    hash.add(y);
    scale(view(x, {rows, cols}), 0.37f, view(y, {rows, cols}));
    hash.add(y);
    sum_rows(view(x, {rows, cols}), view(sums, {cols}), false);
    hash.add(sums);

    std::vector<std::int32_t> targets(rows);
    for (int64_t r = 0; r < rows; ++r) targets[static_cast<std::size_t>(r)] = static_cast<std::int32_t>((r * 7) % cols);
    Buffer loss = zeros(DType::f32, 1), lse = zeros(DType::f32, rows), dlogits = zeros(t, count);
    const TensorView tv(targets.data(), DType::i32, {rows});
    softmax_cross_entropy_forward(view(x, {rows, cols}), tv, view(loss, {1}), view(lse, {rows}));
    softmax_cross_entropy_backward(view(x, {rows, cols}), tv, view(lse, {rows}), 0.5f, view(dlogits, {rows, cols}));
    for (const Buffer* o : {&loss, &lse, &dlogits}) hash.add(*o);

    for (DType to : kFloat) {
      Buffer converted = zeros(to, count);
      convert(view(x, {count}), view(converted, {count}));
      hash.add(converted);
    }

    Buffer table = filled(t, cols * 9, ++seed), emb = zeros(t, rows * 9), dtable = zeros(t, cols * 9);
    embedding_forward(tv, view(table, {cols, 9}), view(emb, {rows, 9}));
    embedding_backward(tv, view(emb, {rows, 9}), view(dtable, {cols, 9}), false);
    hash.add(emb);
    hash.add(dtable);

    Buffer param = filled(DType::f32, count, ++seed), grad = filled(t, count, ++seed), copy = zeros(t, count);
    Buffer m = zeros(DType::f32, count), v = zeros(DType::f32, count), momentum = zeros(DType::f32, count);
    for (int64_t step = 1; step <= 2; ++step) {
      AdamWArgs a;
      a.param = view(param, {count});
      a.grad = view(grad, {count});
      a.m = view(m, {count});
      a.v = view(v, {count});
      a.param_copy = t == DType::f32 ? TensorView() : view(copy, {count});
      a.lr = 1e-2f;
      a.weight_decay = 0.1f;
      a.grad_scale = 0.5f;
      a.step = step;
      adamw_step(a);
      SgdArgs s;
      s.param = a.param;
      s.grad = a.grad;
      s.momentum_buffer = view(momentum, {count});
      s.lr = 1e-2f;
      s.momentum = 0.9f;
      s.weight_decay = 0.01f;
      sgd_step(s);
    }
    for (const Buffer* o : {&param, &m, &v, &momentum, &copy}) hash.add(*o);
  }
}

struct Family {
  const char* name;
  bool vendor_rounding;  // bits from vdpbf16ps / AMX at avx512 and amx
  std::function<void(Hash&)> run;
};

const std::vector<Family>& families() {
  static const std::vector<Family> list = {
      {"gemm_f32", false, [](Hash& h) { gemm_family(h, false); }},
      {"gemm_16bit", true, [](Hash& h) { gemm_family(h, true); }},
      {"norm", false, norm_family},
      {"attention", false, attention_family},
      {"pointwise", false, pointwise_family},
  };
  return list;
}

std::string hex(std::uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// CPUID leaf 0's vendor string ("GenuineIntel", "AuthenticAMD").
std::string cpu_vendor() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  __get_cpuid(0, &eax, &ebx, &ecx, &edx);
  char text[13] = {};
  std::memcpy(text, &ebx, 4);
  std::memcpy(text + 4, &edx, 4);
  std::memcpy(text + 8, &ecx, 4);
  return text;
}

std::string vendor_of(const Family& f, Isa isa) {
  const bool vendor = f.vendor_rounding && (isa == Isa::avx512 || isa == Isa::amx);
  return vendor ? cpu_vendor() : "any";
}

TEST(BitPins, EveryFamilyAtEveryIsaGivesThePinnedBits) {
  // The pins are the Release build's bits. Another optimization level (the sanitized build's -O1)
  // lets GCC contract a*b + c into fused multiply-adds in other places of the GEMM and norm
  // kernels, so its bits differ: a property of the build, not a change of the code.
  if (std::string(AMPKIT_BIT_PIN_BUILD) != "Release")
    GTEST_SKIP() << "bit pins are recorded for the Release build; this is a " << AMPKIT_BIT_PIN_BUILD << " build";
  // "isa family vendor" -> hash; vendor "any", or one line per vendor for the vendor-rounding
  // families (AMD and Intel round vdpbf16ps differently).
  std::map<std::string, std::string> pins;
  std::ifstream in(AMPKIT_BIT_PIN_FILE);
  ASSERT_TRUE(in) << "cannot read " << AMPKIT_BIT_PIN_FILE;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string isa, family, vendor, hash;
    ASSERT_TRUE(fields >> isa >> family >> vendor >> hash) << "bad line in the pin file: " << line;
    pins[isa + " " + family + " " + vendor] = hash;
  }
  const char* record = std::getenv("AMPKIT_BIT_PIN_RECORD");  // print lines for the pin file
  int checked = 0;
  std::string skipped;
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (const Family& f : families()) {
      Hash h;
      f.run(h);
      const std::string key = std::string(isa_name(isa)) + " " + f.name, vendor = vendor_of(f, isa);
      if (record != nullptr) std::printf("%s %s %s\n", key.c_str(), vendor.c_str(), hex(h.h).c_str());
      const auto pin = pins.find(key + " " + vendor);
      if (pin == pins.end()) {
        skipped += " [" + key + " " + vendor + ": no pin]";
      } else {
        EXPECT_EQ(hex(h.h), pin->second) << key << " " << vendor << ": the bits changed";
        ++checked;
      }
    }
  }
  std::printf("bit pins: %d checked; skipped:%s\n", checked, skipped.empty() ? " none" : skipped.c_str());
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace ampkit
