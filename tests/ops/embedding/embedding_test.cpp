// Tests of the embedding lookup and its gradient (kernels and ops layers): every entry of both
// kernel lists against the reference over odd shapes, padded rows and every dtype combination
// (the forward is exact: bit for bit); the backward with repeated ids, accumulate true and false,
// untouched rows and the documented fp32 token order; 1, 2 and 3 threads bitwise; the public
// calls on the selected kernel; bad arguments rejected with outputs left as they were.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/ops/embedding.hpp"
#include "cpu/embedding/embedding_kernels.hpp"
#include "ops/elementwise/op_test_support.hpp"

namespace ampkit {
namespace {

using namespace ops_testing;

struct Shape {
  std::int64_t tokens, vocab, dim;
};
// Around the 64-column tile, single rows and columns, more tokens than rows (many repeats) and
// fewer (most rows untouched).
constexpr Shape kShapes[] = {{1, 1, 1},   {5, 3, 7},     {17, 50, 64}, {33, 10, 65},
                             {2, 100, 3}, {100, 7, 130}, {64, 1, 63},  {300, 1000, 129}};

Buffer random_ids(std::mt19937_64& rng, std::int64_t tokens, std::int64_t vocab) {
  Buffer ids(DType::i32, tokens);
  std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(vocab - 1));
  auto* id = static_cast<std::int32_t*>(ids.data());
  for (std::int64_t t = 0; t < tokens; ++t) id[t] = pick(rng);
  return ids;
}

std::int32_t* ids_of(Buffer& b) { return static_cast<std::int32_t*>(b.data()); }

// A [rows, n] view with `stride` elements between rows.
TensorView strided(Buffer& b, std::int64_t rows, std::int64_t n, std::int64_t stride) {
  TensorView v(b.data(), b.dtype, {rows, n});
  v.strides = {stride, 1};
  return v;
}

TEST(Embedding, ForwardEveryEntryMatchesTheReferenceBitForBit) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto kernels = cpu::embedding_forward_kernels();
  for (const auto& k : kernels)
    for (DType tt : kFloatDTypes)
      for (DType to : kFloatDTypes)
        for (Shape s : kShapes) {
          SCOPED_TRACE(::testing::Message() << k.name << " " << dtype_name(tt) << "/" << dtype_name(to) << " ["
                                            << s.tokens << ", " << s.vocab << ", " << s.dim << "]");
          const std::int64_t table_stride = s.dim + 3, out_stride = s.dim + 2;
          Buffer ids = random_ids(rng, s.tokens, s.vocab);
          Buffer table = random_buffer(rng, tt, s.vocab * table_stride, 0.0, 100.0);
          Buffer out(to, s.tokens * out_stride);
          out.poison();
          Buffer want = out;
          ops::EmbeddingForwardProblem p{s.tokens, s.vocab,      s.dim,      ids_of(ids), table.data(),
                                         tt,       table_stride, out.data(), to,          out_stride};
          ops::EmbeddingForwardProblem ref = p;
          ref.out = want.data();
          k.run(p);
          kernels.back().run(ref);
          // One rounding of an exact value: the same bits; the padding stays poisoned in both.
          EXPECT_TRUE(same_bytes("out", out, want));
          for (std::int64_t t = 0; t < s.tokens; ++t)
            for (std::int64_t j = 0; j < s.dim; ++j)
              if (std::isnan(out.get(t * out_stride + j))) {
                ADD_FAILURE() << "out[" << t << ", " << j << "] was not written";
                t = s.tokens;
                break;
              }
        }
}

// Per element of dtable: the sum of |dout| over the row's tokens and the token count.
struct RowMagnitudes {
  std::vector<double> magnitude;  // [vocab, dim]
  std::vector<double> count;      // [vocab]
  RowMagnitudes(const Buffer& dout, std::int64_t dout_stride, const std::int32_t* ids, std::int64_t tokens,
                std::int64_t vocab, std::int64_t dim)
      : magnitude(static_cast<std::size_t>(vocab * dim), 0.0), count(static_cast<std::size_t>(vocab), 0.0) {
    for (std::int64_t t = 0; t < tokens; ++t) {
      count[static_cast<std::size_t>(ids[t])] += 1.0;
      for (std::int64_t j = 0; j < dim; ++j)
        magnitude[static_cast<std::size_t>(ids[t] * dim + j)] += std::fabs(dout.get(t * dout_stride + j));
    }
  }
};

// The fp32 sum of the row's tokens (in order) plus the old value: its error bound against the
// double reference, and the rounding of both to dtable's dtype.
double backward_tolerance(const RowMagnitudes& rows, std::int64_t v, std::int64_t j, std::int64_t dim, double old,
                          bool accumulate, DType td, double want) {
  const double magnitude = rows.magnitude[static_cast<std::size_t>(v * dim + j)] + (accumulate ? std::fabs(old) : 0.0);
  const double count = rows.count[static_cast<std::size_t>(v)] + (accumulate ? 1.0 : 0.0);
  return error_bounds::embedding_backward_output(count, magnitude, want, td);
}

TEST(Embedding, BackwardEveryEntryMatchesTheReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const auto kernels = cpu::embedding_backward_kernels();
  for (const auto& k : kernels)
    for (DType tg : kFloatDTypes)
      for (DType td : kFloatDTypes)
        for (Shape s : kShapes)
          for (bool accumulate : {false, true}) {
            SCOPED_TRACE(::testing::Message()
                         << k.name << " " << dtype_name(tg) << "/" << dtype_name(td) << " [" << s.tokens << ", "
                         << s.vocab << ", " << s.dim << "] accumulate " << accumulate);
            const std::int64_t dout_stride = s.dim + 1, dtable_stride = s.dim + 3;
            Buffer ids = random_ids(rng, s.tokens, s.vocab);
            Buffer dout = random_buffer(rng, tg, s.tokens * dout_stride, 0.25);
            Buffer dtable = random_buffer(rng, td, s.vocab * dtable_stride, -0.5);
            if (!accumulate) dtable.poison();
            for (std::int64_t v = 0; v < s.vocab; ++v)  // padding poisoned either way
              for (std::int64_t j = s.dim; j < dtable_stride; ++j) dtable.set(v * dtable_stride + j, NAN);
            const Buffer old = dtable;
            Buffer want = dtable;
            ops::EmbeddingBackwardProblem p{s.tokens,    s.vocab,       s.dim, ids_of(ids),   dout.data(), tg,
                                            dout_stride, dtable.data(), td,    dtable_stride, accumulate};
            ops::EmbeddingBackwardProblem ref = p;
            ref.dtable = want.data();
            k.run(p);
            kernels.back().run(ref);
            const RowMagnitudes rows(dout, dout_stride, ids_of(ids), s.tokens, s.vocab, s.dim);
            std::vector<bool> hit(static_cast<std::size_t>(s.vocab), false);
            for (std::int64_t t = 0; t < s.tokens; ++t) hit[static_cast<std::size_t>(ids_of(ids)[t])] = true;
            int bad = 0;
            for (std::int64_t v = 0; v < s.vocab; ++v)
              for (std::int64_t j = 0; j < dtable_stride; ++j) {
                const std::int64_t i = v * dtable_stride + j;
                const std::size_t bytes = dtype_size(td);
                const bool same_bits = std::memcmp(&dtable.bytes[static_cast<std::size_t>(i) * bytes],
                                                   &old.bytes[static_cast<std::size_t>(i) * bytes], bytes) == 0;
                if (j >= s.dim || (accumulate && !hit[static_cast<std::size_t>(v)])) {
                  if (!same_bits && bad++ < 5)
                    ADD_FAILURE() << "dtable[" << v << ", " << j << "] was written but must be kept";
                } else if (!hit[static_cast<std::size_t>(v)]) {
                  if (dtable.get(i) != 0.0 || std::signbit(dtable.get(i)))
                    if (bad++ < 5)
                      ADD_FAILURE() << "dtable[" << v << ", " << j << "] = " << dtable.get(i) << ", not +0";
                } else {
                  const double w = want.get(i), g = dtable.get(i);
                  const double tol = backward_tolerance(rows, v, j, s.dim, old.get(i), accumulate, td, w);
                  if (!(std::fabs(g - w) <= tol) && bad++ < 5)
                    ADD_FAILURE() << "dtable[" << v << ", " << j << "] = " << g << ", reference " << w << ", tolerance "
                                  << tol;
                }
              }
            EXPECT_EQ(bad, 0);
          }
}

TEST(Embedding, BackwardRepeatedIdsGiveTheExpectedRows) {
  // Small integers: every sum is exact in every dtype, so kernel, reference and the hand sums
  // agree exactly. Row 2 is hit three times, rows 0 and 4 once, rows 1, 3, 5 never.
  const std::int32_t id[] = {2, 0, 2, 2, 4};
  const double g[5][3] = {{1, 2, 3}, {-4, 5, 6}, {7, -8, 9}, {10, 11, -12}, {13, 14, 15}};
  const double expected[6][3] = {{-4, 5, 6}, {0, 0, 0}, {18, 5, 0}, {0, 0, 0}, {13, 14, 15}, {0, 0, 0}};
  for (const auto& k : cpu::embedding_backward_kernels())
    for (DType tg : kFloatDTypes)
      for (DType td : kFloatDTypes)
        for (bool accumulate : {false, true}) {
          SCOPED_TRACE(::testing::Message()
                       << k.name << " " << dtype_name(tg) << "/" << dtype_name(td) << " accumulate " << accumulate);
          Buffer ids(DType::i32, 5), dout(tg, 15), dtable(td, 18);
          std::memcpy(ids.data(), id, sizeof id);
          for (int t = 0; t < 5; ++t)
            for (int j = 0; j < 3; ++j) dout.set(t * 3 + j, g[t][j]);
          for (int i = 0; i < 18; ++i) dtable.set(i, 100 + i);
          const ops::EmbeddingBackwardProblem p{5,  6, 3,         ids_of(ids), dout.data(), tg, 3, dtable.data(),
                                                td, 3, accumulate};
          k.run(p);
          for (int v = 0; v < 6; ++v)
            for (int j = 0; j < 3; ++j) {
              const bool hit = v == 0 || v == 2 || v == 4;
              const double want = accumulate ? 100 + v * 3 + j + (hit ? expected[v][j] : 0.0) : expected[v][j];
              EXPECT_EQ(dtable.get(v * 3 + j), want) << "dtable[" << v << ", " << j << "]";
            }
        }
}

TEST(Embedding, BackwardSumsTheTokensInOrderInFp32) {
  // Row 1 gets 1, 2^24, -2^24 in token order: fp32 gives (1 + 2^24) - 2^24 = 0 (1 + 2^24 rounds
  // to 2^24), where the double reference gives 1. Row 0's tokens, in between, give
  // (-3 + 2^24) + 3 = 2^24 exactly. Accumulating adds the old value after the sum:
  // 0.5 + 0 for row 1 (adding 0.5 first would give 2), and 0.5 + 2^24 -> 2^24 for row 0.
  const std::int32_t id[] = {1, 0, 1, 0, 1, 0};
  const float g[] = {1.0f, -3.0f, 0x1p24f, 0x1p24f, -0x1p24f, 3.0f};
  Buffer ids(DType::i32, 6), dout(DType::f32, 6), dtable(DType::f32, 2);
  std::memcpy(ids.data(), id, sizeof id);
  std::memcpy(dout.data(), g, sizeof g);
  const auto& cpu_entry = cpu::embedding_backward_kernels().front();
  ops::EmbeddingBackwardProblem p{6,          2, 1,    ids_of(ids), dout.data(), DType::f32, 1, dtable.data(),
                                  DType::f32, 1, false};
  cpu_entry.run(p);
  EXPECT_EQ(dtable.get(1), 0.0);
  EXPECT_EQ(dtable.get(0), 0x1p24);
  dtable.set(0, 0.5);
  dtable.set(1, 0.5);
  p.accumulate = true;
  cpu_entry.run(p);
  EXPECT_EQ(dtable.get(1), 0.5);         // 0.5 + 0
  EXPECT_EQ(dtable.get(0), 0x1p24);      // 0.5 + 2^24 rounds to 2^24
  cpu::embedding_backward_reference(p);  // double: 0.5 + 1
  EXPECT_EQ(dtable.get(1), 1.5);
}

TEST(Embedding, OneTwoAndThreeThreadsGiveIdenticalBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::int64_t tokens = 4096, vocab = 300, dim = 200;
  // Skewed ids: half the tokens on row 7 (one long tile chain), the rest spread out.
  Buffer ids = random_ids(rng, tokens, vocab);
  for (std::int64_t t = 0; t < tokens; t += 2) ids_of(ids)[t] = 7;
  const Buffer table = random_buffer(rng, DType::bf16, vocab * dim);
  const Buffer dout = random_buffer(rng, DType::bf16, tokens * dim);
  const Buffer dtable0 = random_buffer(rng, DType::f32, vocab * dim);
  Buffer out[3], dtable[3], dtable_acc[3];
  for (int threads = 1; threads <= 3; ++threads) {
    testing::ThreadsScope scope(threads);
    Buffer tab = table, g = dout;
    out[threads - 1] = Buffer(DType::f16, tokens * dim);
    dtable[threads - 1] = Buffer(DType::bf16, vocab * dim);
    dtable_acc[threads - 1] = dtable0;
    embedding_forward(view_of(ids, {tokens}), view_of(tab, {vocab, dim}), view_of(out[threads - 1], {tokens, dim}));
    embedding_backward(view_of(ids, {tokens}), view_of(g, {tokens, dim}), view_of(dtable[threads - 1], {vocab, dim}),
                       false);
    embedding_backward(view_of(ids, {tokens}), view_of(g, {tokens, dim}),
                       view_of(dtable_acc[threads - 1], {vocab, dim}), true);
  }
  for (int i = 1; i < 3; ++i) {
    SCOPED_TRACE(::testing::Message() << "1 thread vs " << i + 1);
    EXPECT_TRUE(same_bytes("out", out[0], out[i]));
    EXPECT_TRUE(same_bytes("dtable", dtable[0], dtable[i]));
    EXPECT_TRUE(same_bytes("dtable (accumulate)", dtable_acc[0], dtable_acc[i]));
  }
}

TEST(Embedding, PublicCallsRunTheSelectedKernelOnStridedViews) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  const std::int64_t tokens = 9, vocab = 11, dim = 70;
  Buffer ids = random_ids(rng, tokens, vocab);
  Buffer table = random_buffer(rng, DType::f32, vocab * (dim + 5));
  Buffer out(DType::bf16, tokens * (dim + 1)), want(DType::bf16, tokens * (dim + 1));
  out.poison();
  want.poison();
  embedding_forward(view_of(ids, {tokens}), strided(table, vocab, dim, dim + 5), strided(out, tokens, dim, dim + 1));
  const ops::EmbeddingForwardProblem p{tokens,     vocab,   dim,         ids_of(ids), table.data(),
                                       DType::f32, dim + 5, want.data(), DType::bf16, dim + 1};
  ops::select_kernel(cpu::embedding_forward_kernels(), p).run(p);
  EXPECT_TRUE(same_bytes("out", out, want));

  Buffer dout = random_buffer(rng, DType::f16, tokens * (dim + 2));
  Buffer dtable = random_buffer(rng, DType::f32, vocab * (dim + 4)), dwant = dtable;
  embedding_backward(view_of(ids, {tokens}), strided(dout, tokens, dim, dim + 2), strided(dtable, vocab, dim, dim + 4),
                     true);
  const ops::EmbeddingBackwardProblem q{tokens,  vocab,        dim,        ids_of(ids), dout.data(), DType::f16,
                                        dim + 2, dwant.data(), DType::f32, dim + 4,     true};
  ops::select_kernel(cpu::embedding_backward_kernels(), q).run(q);
  EXPECT_TRUE(same_bytes("dtable", dtable, dwant));
}

TEST(Embedding, EmptyCalls) {
  Buffer ids(DType::i32, 1), table(DType::f32, 6), out(DType::f32, 6);
  out.poison();
  const Buffer poisoned = out;
  // No tokens: nothing written by the forward.
  embedding_forward(view_of(ids, {0}), view_of(table, {3, 2}), view_of(out, {0, 2}));
  EXPECT_TRUE(same_bytes("out", out, poisoned));
  // No tokens, backward: accumulate keeps every row, otherwise every row becomes 0.
  Buffer dtable = poisoned;
  embedding_backward(view_of(ids, {0}), view_of(table, {0, 2}), view_of(dtable, {3, 2}), true);
  EXPECT_TRUE(same_bytes("dtable", dtable, poisoned));
  embedding_backward(view_of(ids, {0}), view_of(table, {0, 2}), view_of(dtable, {3, 2}), false);
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_EQ(dtable.get(i), 0.0);
  // dim 0 and vocab 0 (with no tokens) are accepted and write nothing.
  embedding_forward(view_of(ids, {1}), view_of(table, {3, 0}), view_of(out, {1, 0}));
  embedding_backward(view_of(ids, {0}), view_of(table, {0, 2}), view_of(out, {0, 2}), false);
  EXPECT_TRUE(same_bytes("out", out, poisoned));
}

// Sets ids[t] = value for the scope.
class IdScope {
 public:
  IdScope(Buffer& ids, std::int64_t t, std::int32_t value) : id_(ids_of(ids) + t), saved_(*id_) { *id_ = value; }
  ~IdScope() { *id_ = saved_; }
  IdScope(const IdScope&) = delete;
  IdScope& operator=(const IdScope&) = delete;

 private:
  std::int32_t* id_;
  std::int32_t saved_;
};

TEST(Embedding, BadArgumentsAreRejectedAndNothingIsWritten) {
  std::mt19937_64 rng(3);
  const std::int64_t tokens = 4, vocab = 5, dim = 3;
  Buffer ids = random_ids(rng, tokens, vocab);
  Buffer table = random_buffer(rng, DType::bf16, vocab * dim);
  Buffer out(DType::f32, tokens * dim), dout = random_buffer(rng, DType::f32, tokens * dim);
  Buffer dtable(DType::f16, vocab * dim);
  out.poison();
  dtable.poison();
  const Buffer out0 = out, dtable0 = dtable;
  const TensorView vi = view_of(ids, {tokens}), vt = view_of(table, {vocab, dim});
  const TensorView vo = view_of(out, {tokens, dim}), vg = view_of(dout, {tokens, dim});
  const TensorView vd = view_of(dtable, {vocab, dim});
  auto on_cuda = [](TensorView v) {
    v.device = Device::cuda;
    return v;
  };
  // A cuda operand among cpu ones: unsupported without a usable GPU (saying why), two devices
  // (invalid) with one.
  const ErrorKind cuda_kind = cuda_device_count() > 0 ? ErrorKind::invalid_argument : ErrorKind::unsupported;
  TensorView negative = vt;
  negative.shape[0] = -1;
  TensorView ids_strided = view_of(ids, {2});
  ids_strided.strides[0] = 2;
  auto forward = [](TensorView i, TensorView t, TensorView o) {
    return std::function<void()>([=] { embedding_forward(i, t, o); });
  };
  auto backward = [](TensorView i, TensorView g, TensorView d) {
    return std::function<void()>([=] { embedding_backward(i, g, d, true); });
  };
  const char* fwd = "embedding_forward: ";
  const char* bwd = "embedding_backward: ";
  const ErrorKind invalid = ErrorKind::invalid_argument;
  struct Case {
    const char* what;
    std::function<void()> call;
    ErrorKind kind;
    std::vector<const char*> parts;
  };
  const Case cases[] = {
      {"id too large",
       [&] {
         IdScope s(ids, 2, 5);
         embedding_forward(vi, vt, vo);
       },
       invalid,
       {fwd, "ids[2] = 5 is out of range [0, 5)"}},
      {"id negative",
       [&] {
         IdScope s(ids, 3, -7);
         embedding_backward(vi, vg, vd, false);
       },
       invalid,
       {bwd, "ids[3] = -7 is out of range [0, 5)"}},
      {"id too large, accumulate",
       [&] {
         IdScope s(ids, 0, 1 << 30);
         embedding_backward(vi, vg, vd, true);
       },
       invalid,
       {bwd, "ids[0] = 1073741824 is out of range [0, 5)"}},
      {"ids dtype", forward(view_of(dout, {tokens}), vt, vo), invalid, {fwd, "ids dtype must be i32, but got f32"}},
      {"ids rank", forward(view_of(ids, {2, 2}), vt, vo), invalid, {fwd, "ids must have rank 1, but got shape [2, 2]"}},
      {"ids strided", forward(ids_strided, vt, view_of(out, {2, dim})), invalid, {fwd, "ids must be contiguous"}},
      {"ids absent", forward(TensorView(), vt, vo), invalid, {fwd, "ids must be present"}},
      {"ids on cuda", backward(on_cuda(vi), vg, vd), cuda_kind, {bwd, "ids is in cuda:0 memory, but "}},
      {"table rank",
       forward(vi, view_of(table, {15}), vo),
       invalid,
       {fwd, "table must have rank 2, but got shape [15]"}},
      {"table dtype",
       forward(vi, view_of(ids, {2, 2}), view_of(out, {tokens, 2})),
       invalid,
       {fwd, "table dtype must be f32, bf16 or f16, but got i32"}},
      {"table negative dim", forward(vi, negative, vo), invalid, {fwd, "table dimension 0 must be >= 0"}},
      {"out shape",
       forward(vi, vt, view_of(out, {tokens, dim - 1})),
       invalid,
       {fwd, "out must have shape [tokens, dim]", "= [4, 3], but got [4, 2]"}},
      {"out tokens",
       forward(vi, vt, view_of(out, {tokens - 1, dim})),
       invalid,
       {fwd, "out must have shape", "but got [3, 3]"}},
      {"out on cuda", forward(vi, vt, on_cuda(vo)), cuda_kind, {fwd, "out is in cuda:0 memory, but "}},
      {"out column-major",
       forward(vi, vt, TensorView::column_major(out.data(), DType::f32, tokens, dim, tokens)),
       invalid,
       {fwd, "out last dim must be contiguous"}},
      {"out null",
       forward(vi, vt, TensorView(nullptr, DType::f32, {tokens, dim})),
       invalid,
       {fwd, "out must point to its 12 elements, but got null"}},
      {"out overlaps table",
       forward(vi, vt, TensorView(table.data(), DType::bf16, {tokens, dim})),
       invalid,
       {fwd, "out", "must not overlap table"}},
      {"out overlaps ids",
       forward(vi, vt, TensorView(ids.data(), DType::f16, {tokens, dim})),
       invalid,
       {fwd, "out", "must not overlap ids"}},
      {"out is table",
       forward(vi, vt, TensorView(table.data(), DType::bf16, {vocab - 1, dim})),
       invalid,
       {fwd, "out", "must not overlap table"}},
      {"dout shape",
       backward(vi, view_of(dout, {tokens, dim - 1}), vd),
       invalid,
       {bwd, "dout must have shape [tokens, dim]", "= [4, 3], but got [4, 2]"}},
      {"dout rank", backward(vi, view_of(dout, {tokens * dim}), vd), invalid, {bwd, "dout must have rank 2"}},
      {"dout dtype",
       backward(vi, view_of(ids, {tokens, 1}), view_of(dtable, {vocab, 1})),
       invalid,
       {bwd, "dout dtype must be f32, bf16 or f16, but got i32"}},
      {"dtable dim",
       backward(vi, vg, view_of(dtable, {3, 5})),
       invalid,
       {bwd, "dout must have shape", "= [4, 5], but got [4, 3]"}},
      {"dtable overlaps dout",
       backward(vi, vg, TensorView(dout.data(), DType::f16, {vocab, dim})),
       invalid,
       {bwd, "dtable", "must not overlap dout"}},
      {"dtable overlaps ids",
       backward(vi, vg, TensorView(ids.data(), DType::bf16, {vocab, dim})),
       invalid,
       {bwd, "dtable", "must not overlap ids"}},
      {"dtable on cuda",
       backward(vi, vg, on_cuda(vd)),
       cuda_kind,
       {bwd, cuda_device_count() > 0 ? "ids is in cpu memory, but dtable is in cuda:0 memory"
                                     : "dtable is in cuda:0 memory, but "}},
      {"dtable absent", backward(vi, vg, TensorView()), invalid, {bwd, "dtable must be present"}},
      {"no vocabulary",
       backward(vi, vg, view_of(dtable, {0, dim})),
       invalid,
       {bwd, "ids[0] = ", "is out of range [0, 0)"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_TRUE(fails_with(c.call, c.kind, c.parts));
    EXPECT_TRUE(same_bytes("out", out, out0));
    EXPECT_TRUE(same_bytes("dtable", dtable, dtable0));
  }
  // The valid calls on the same buffers do write.
  embedding_forward(vi, vt, vo);
  embedding_backward(vi, vg, vd, false);
  EXPECT_FALSE(out.bytes == out0.bytes);
  EXPECT_FALSE(dtable.bytes == dtable0.bytes);
}

}  // namespace
}  // namespace ampkit
