// Tests of the attention front end (ops layer): q, k, v as column slices of one packed QKV buffer
// and dq, dk, dv as slices of one packed dQKV buffer give the bits of separate buffers; 1 vs 2
// threads bitwise; the overlap rules (inputs may overlap, outputs may interleave only exactly
// disjointly; the exact test against a brute-force byte comparison on random layouts); the kernel
// queries; a table of bad calls, each rejected with its message and nothing written.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ampkit/ops/attention.hpp"
#include "ops/attention/attention_problem.hpp"
#include "ops/attention/attention_test_support.hpp"

namespace ampkit {
namespace {

using namespace attention_testing;

// A [batch, seq, width] buffer; slice(col0, cols) is a [batch, seq, cols] view of its columns.
struct Packed {
  std::int64_t batch, seq, width;
  Buffer data;
  Packed(DType t, std::int64_t b, std::int64_t s, std::int64_t w) : batch(b), seq(s), width(w), data(t, b * s * w) {}
  TensorView slice(std::int64_t col0, std::int64_t cols) {
    auto* base = static_cast<char*>(data.data()) + col0 * static_cast<std::int64_t>(dtype_size(data.dtype));
    TensorView v(base, data.dtype, {batch, seq, cols});
    v.strides = {seq * width, width, 1};
    return v;
  }
  // Column slice [col0, col0 + cols) copied into a contiguous buffer.
  Buffer copy(std::int64_t col0, std::int64_t cols) const {
    Buffer out(data.dtype, batch * seq * cols);
    for (std::int64_t r = 0; r < batch * seq; ++r)
      for (std::int64_t c = 0; c < cols; ++c) out.set(r * cols + c, data.get(r * width + col0 + c));
    return out;
  }
};

TEST(AttentionApi, PackedQkvGivesTheBitsOfSeparateBuffers) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  constexpr std::int64_t kB = 2, kT = 37, kH = 3, kD = 8, kC = kH * kD;
  for (DType t : kFloatDTypes) {
    SCOPED_TRACE(dtype_name(t));
    Packed qkv(t, kB, kT, 3 * kC);
    qkv.data.fill_normal(rng, 0.0, 1.0);
    Buffer q = qkv.copy(0, kC), k = qkv.copy(kC, kC), v = qkv.copy(2 * kC, kC);
    Buffer out_p(t, kB * kT * kC), out_s(t, kB * kT * kC), lse_p(DType::f32, kB * kH * kT),
        lse_s(DType::f32, kB * kH * kT);
    for (Buffer* b : {&out_p, &out_s, &lse_p, &lse_s}) b->poison();
    attention_forward({qkv.slice(0, kC), qkv.slice(kC, kC), qkv.slice(2 * kC, kC), view_of(out_p, {kB, kT, kC}),
                       view_of(lse_p, {kB, kH, kT}), kH});
    attention_forward({view_of(q, {kB, kT, kC}), view_of(k, {kB, kT, kC}), view_of(v, {kB, kT, kC}),
                       view_of(out_s, {kB, kT, kC}), view_of(lse_s, {kB, kH, kT}), kH});
    EXPECT_TRUE(same_bytes("out", out_p, out_s));
    EXPECT_TRUE(same_bytes("lse", lse_p, lse_s));
    // Backward into one packed dQKV buffer vs three separate ones.
    Buffer dout = random_buffer(rng, t, kB * kT * kC);
    Packed dqkv(t, kB, kT, 3 * kC);
    dqkv.data.poison();
    Buffer dq(t, kB * kT * kC), dk(t, kB * kT * kC), dv(t, kB * kT * kC);
    AttentionBackwardArgs a;
    a.q = qkv.slice(0, kC), a.k = qkv.slice(kC, kC), a.v = qkv.slice(2 * kC, kC);
    a.out = view_of(out_p, {kB, kT, kC}), a.lse = view_of(lse_p, {kB, kH, kT});
    a.dout = view_of(dout, {kB, kT, kC});
    a.dq = dqkv.slice(0, kC), a.dk = dqkv.slice(kC, kC), a.dv = dqkv.slice(2 * kC, kC);
    a.heads = kH;
    attention_backward(a);
    a.q = view_of(q, {kB, kT, kC}), a.k = view_of(k, {kB, kT, kC}), a.v = view_of(v, {kB, kT, kC});
    a.dq = view_of(dq, {kB, kT, kC}), a.dk = view_of(dk, {kB, kT, kC}), a.dv = view_of(dv, {kB, kT, kC});
    attention_backward(a);
    EXPECT_TRUE(same_bytes("dq", dqkv.copy(0, kC), dq));
    EXPECT_TRUE(same_bytes("dk", dqkv.copy(kC, kC), dk));
    EXPECT_TRUE(same_bytes("dv", dqkv.copy(2 * kC, kC), dv));
  }
}

TEST(AttentionApi, OneAndTwoThreadsGiveIdenticalBits) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  Roles r = uniform_roles(DType::bf16);
  r.dk = DType::f32;
  const Case base = make_case(rng, {2, 70, 3, 16}, r, 2);  // parallel: 3 row blocks, 6 heads
  Case runs[2] = {base, base};
  for (int threads : {1, 2}) {
    testing::ThreadsScope scope(threads);
    Case& c = runs[threads - 1];
    attention_forward(c.forward_args());
    attention_backward(c.backward_args());
  }
  EXPECT_TRUE(same_bytes("out", runs[0].out, runs[1].out));
  EXPECT_TRUE(same_bytes("lse", runs[0].lse, runs[1].lse));
  EXPECT_TRUE(same_bytes("dq", runs[0].dq, runs[1].dq));
  EXPECT_TRUE(same_bytes("dk", runs[0].dk, runs[1].dk));
  EXPECT_TRUE(same_bytes("dv", runs[0].dv, runs[1].dv));
}

TEST(AttentionApi, InputsMayOverlapAndGradientSlicesMayInterleave) {
  std::mt19937_64 rng(7);
  constexpr std::int64_t kB = 2, kT = 5, kH = 2, kD = 3, kC = kH * kD;
  Buffer x = random_buffer(rng, DType::f32, kB * kT * kC);
  Buffer out(DType::f32, kB * kT * kC), lse(DType::f32, kB * kH * kT);
  const TensorView vx = view_of(x, {kB, kT, kC});
  // q = k = v: the same memory three times.
  attention_forward({vx, vx, vx, view_of(out, {kB, kT, kC}), view_of(lse, {kB, kH, kT}), kH});
  Buffer dout = random_buffer(rng, DType::f32, kB * kT * kC);
  AttentionBackwardArgs a;
  a.q = a.k = a.v = vx;
  a.out = view_of(out, {kB, kT, kC}), a.lse = view_of(lse, {kB, kH, kT});
  a.dout = view_of(dout, {kB, kT, kC});
  a.heads = kH;
  // dq, dk, dv interleaved per head in one [B, T, 3C] buffer: columns dq_h0 dk_h0 dv_h0 ... is not
  // a [B, T, C] slice, but [dk | dq | dv] in any order is; and a gap between slices is fine.
  Packed g(DType::f32, kB, kT, 3 * kC + 2);
  a.dq = g.slice(kC + 1, kC), a.dk = g.slice(0, kC), a.dv = g.slice(2 * kC + 2, kC);
  EXPECT_NO_THROW(attention_backward(a));
  // Overlapping columns are rejected, whichever order the slices come in.
  a.dq = g.slice(0, kC), a.dk = g.slice(kC - 1, kC), a.dv = g.slice(2 * kC + 2, kC);
  EXPECT_TRUE(throws_with([&] { attention_backward(a); },
                          {"attention_backward: dk", "must not overlap the output dq", "share memory"}));
  a.dq = g.slice(2 * kC + 2, kC), a.dk = g.slice(0, kC), a.dv = g.slice(2 * kC + 1, kC);
  EXPECT_TRUE(throws_with([&] { attention_backward(a); }, {"dv", "must not overlap the output dq"}));
  // Rows of one slice landing in another's columns of the next row: a row stride of C with
  // dk one row later than dq overlaps; one row stride of 2C with dk C later does not.
  Buffer flat(DType::f32, kB * kT * 2 * kC + kC);
  auto strided = [&](std::int64_t offset, std::int64_t row_stride) {
    TensorView v(static_cast<float*>(flat.data()) + offset, DType::f32, {kB, kT, kC});
    v.strides = {kT * row_stride, row_stride, 1};
    return v;
  };
  a.dq = strided(0, 2 * kC), a.dk = strided(kC, 2 * kC), a.dv = TensorView();
  EXPECT_NO_THROW(attention_backward(a));
  a.dq = strided(0, 2 * kC), a.dk = strided(2 * kC, 2 * kC);  // dk row i = dq row i + 1
  EXPECT_TRUE(throws_with([&] { attention_backward(a); }, {"dk", "must not overlap the output dq"}));
  a.dq = strided(0, kC), a.dk = strided(kC, 2 * kC);  // strides differ and ranges overlap
  EXPECT_TRUE(throws_with([&] { attention_backward(a); }, {"dk", "must not overlap the output dq"}));
  a.dq = a.dk = strided(0, 2 * kC);
  EXPECT_TRUE(throws_with([&] { attention_backward(a); }, {"dk", "must not overlap the output dq"}));
}

// dq and dk as random strided views into one byte buffer, checked against the bytes they touch:
// the front end never accepts two that share a byte, and with equal byte strides it accepts every
// pair that shares none (the exact test); with different strides it asks for disjoint ranges.
TEST(AttentionApi, GradientOverlapTestAgreesWithBruteForce) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(::testing::Message() << "AMPKIT_TEST_SEED=" << seed);
  std::mt19937_64 rng(seed);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  alignas(64) static unsigned char bytes[4096];
  int exact = 0, apart = 0, shared = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t nb = pick(1, 3), nt = pick(1, 4), nc = pick(1, 4);
    Buffer q = random_buffer(rng, DType::f32, nb * nt * nc), lse(DType::f32, nb * nt);
    const TensorView vq = view_of(q, {nb, nt, nc});
    struct Out {
      TensorView view;
      std::vector<std::int64_t> touched;  // byte offsets into `bytes`
    };
    auto make = [&](DType t, std::int64_t row_stride, std::int64_t batch_stride) {
      const auto e = static_cast<std::int64_t>(dtype_size(t));
      const std::int64_t offset = pick(0, 40) * 2;  // bytes; f16/bf16 stay aligned
      Out o;
      o.view = TensorView(bytes + offset, t, {nb, nt, nc});
      o.view.strides = {batch_stride, row_stride, 1};
      for (std::int64_t b = 0; b < nb; ++b)
        for (std::int64_t i = 0; i < nt; ++i)
          for (std::int64_t x = 0; x < nc * e; ++x)
            o.touched.push_back(offset + (b * batch_stride + i * row_stride) * e + x);
      return o;
    };
    auto layout = [&](std::int64_t* rs, std::int64_t* bs) {
      *rs = nc + pick(0, 2 * nc + 2);
      *bs = (nt - 1) * *rs + nc + pick(0, 6);
    };
    std::int64_t rs = 0, bs = 0;
    layout(&rs, &bs);
    const bool same = pick(0, 3) != 0;
    const DType t = pick(0, 1) != 0 ? DType::bf16 : DType::f16;
    const Out dq = make(t, rs, bs);
    if (!same) layout(&rs, &bs);
    const Out dk = make(same ? t : DType::bf16, rs, bs);
    std::vector<bool> seen(sizeof(bytes));
    for (std::int64_t x : dq.touched) seen[static_cast<std::size_t>(x)] = true;
    bool share = false;
    for (std::int64_t x : dk.touched) share = share || seen[static_cast<std::size_t>(x)];
    const auto range = [](const std::vector<std::int64_t>& v) {
      return std::pair{*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
    };
    const auto [a0, a1] = range(dq.touched);
    const auto [b0, b1] = range(dk.touched);
    const bool ranges_meet = a0 <= b1 && b0 <= a1;
    const bool equal_strides = same || ((nb == 1 || dq.view.strides[0] == dk.view.strides[0]) &&
                                        (nt == 1 || dq.view.strides[1] == dk.view.strides[1]));
    AttentionBackwardArgs a;
    a.q = a.k = a.v = a.out = a.dout = vq;
    a.lse = view_of(lse, {nb, 1, nt});
    a.dq = dq.view;
    a.dk = dk.view;
    bool accepted = true;
    try {
      attention_kernel_statuses(a);  // validates, runs nothing
    } catch (const Error& e) {
      accepted = false;
      EXPECT_NE(std::string(e.what()).find("dk"), std::string::npos) << e.what();
    }
    SCOPED_TRACE(
        ::testing::Message() << "trial " << trial << " [" << nb << ", " << nt << ", " << nc << "] dq "
                             << dq.view.describe() << " at +" << static_cast<unsigned char*>(dq.view.data) - bytes
                             << " strides " << dq.view.strides[0] << "/" << dq.view.strides[1] << ", dk "
                             << dk.view.describe() << " at +" << static_cast<unsigned char*>(dk.view.data) - bytes
                             << " strides " << dk.view.strides[0] << "/" << dk.view.strides[1]);
    // Never accepted when they share a byte; with equal strides (or apart), accepted otherwise.
    EXPECT_EQ(accepted, !share && (equal_strides || !ranges_meet)) << "share a byte: " << share;
    exact += equal_strides && ranges_meet && !share;
    apart += !ranges_meet;
    shared += share;
  }
  // The draws must reach all three situations.
  EXPECT_GT(exact, 0);
  EXPECT_GT(apart, 0);
  EXPECT_GT(shared, 0);
}

// Runs f, expects an ampkit::Error whose message contains every one of `parts`.
::testing::AssertionResult throws_with_all(const std::function<void()>& f, const std::vector<const char*>& parts) {
  try {
    f();
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const char* part : parts)
      if (message.find(part) == std::string::npos)
        return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << part << "\"";
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no ampkit::Error thrown";
}

// A table of bad calls on poisoned buffers: each must throw with its message and write nothing.
TEST(AttentionApi, BadArgumentsAreRejectedAndNothingIsWritten) {
  std::mt19937_64 rng(3);
  Case c = make_case(rng, {2, 4, 2, 3}, uniform_roles(DType::bf16), 1);
  c.lse.fill_normal(rng, 0.0, 1.0);  // an input of the backward; the forward's output
  Buffer wide(DType::bf16, 2 * 4 * 12);
  wide.poison();
  const std::vector<Buffer*> outputs = {&c.out, &c.lse, &c.dq, &c.dk, &c.dv, &wide};
  std::vector<ampkit::testing::Bytes> before;
  for (Buffer* b : outputs) before.push_back(b->bytes);

  using Fwd = std::function<void(AttentionForwardArgs&)>;
  using Bwd = std::function<void(AttentionBackwardArgs&)>;
  struct FwdRow {
    Fwd edit;
    std::vector<const char*> parts;
  };
  struct BwdRow {
    Bwd edit;
    std::vector<const char*> parts;
  };
  const TensorView lse_as_bf16(c.lse.data(), DType::bf16, {2, 2, 4});
  const TensorView wide_view = view_of(wide, {2, 4, 12});
  const std::vector<FwdRow> forward_rows = {
      {[](auto& a) { a.heads = 0; }, {"attention_forward: heads must be >= 1, but got 0"}},
      {[](auto& a) { a.heads = 4; }, {"q's last dim (6) must be a multiple of heads (4)"}},
      {[](auto& a) { a.scale = -1.0f; }, {"scale must be >= 0", "but got -1"}},
      {[](auto& a) { a.scale = NAN; }, {"scale must be finite"}},
      {[](auto& a) { a.q = TensorView(); }, {"q must be present"}},
      {[](auto& a) { a.k.rank = 2; }, {"k must have rank 3"}},
      {[](auto& a) { a.v.dtype = DType::i32; }, {"v dtype must be f32, bf16 or f16, but got i32"}},
      // A cuda operand among cpu ones: without a GPU unsupported, with one two devices; either way named.
      {[](auto& a) { a.out.device = Device::cuda; }, {"out is in cuda:0 memory, but "}},
      {[](auto& a) { a.out.shape[1] = 3; }, {"out shape must equal q's shape [2, 4, 6], but got [2, 3, 6]"}},
      {[](auto& a) { a.q.strides[2] = 2; }, {"q last dim must be contiguous (stride 1)"}},
      {[](auto& a) { a.k.strides[1] = -7; }, {"k strides must be >= 0"}},
      {[](auto& a) { a.v.data = nullptr; }, {"v must point to its elements, but got null"}},
      {[](auto& a) { a.out.strides[1] = 5; }, {"out is an output, so its elements must not overlap each other"}},
      {[](auto& a) { a.out.strides[0] = 20; }, {"out is an output, so its elements must not overlap each other"}},
      {[](auto& a) {
         a.q.shape = {2, 4, 0};
         a.k.shape = a.v.shape = a.out.shape = a.q.shape;
       },
       {"q's last dim (heads * head_dim) must be >= 1"}},
      {[](auto& a) { a.lse = TensorView(); }, {"lse must be given"}},
      {[&](auto& a) { a.lse = lse_as_bf16; }, {"lse dtype must be f32, but got bf16"}},
      {[](auto& a) {
         a.lse.shape = {2, 4, 2};
       },
       {"lse must have shape [batch, heads, seq] = [2, 2, 4], but got [2, 4, 2]"}},
      {[](auto& a) {
         a.lse.strides = {8, 1, 2};
       },
       {"lse must be row-major contiguous"}},
      {[](auto& a) {
         a.out = a.q;
         a.out.dtype = DType::bf16;
       },
       {"out", "must not overlap the input q"}},
      {[&](auto& a) {
         a.lse = TensorView(a.k.data, DType::f32, {2, 2, 4});
       },
       {"lse", "must not overlap the input k"}},
      {[&](auto& a) {
         a.out = wide_view;
         a.out.shape[2] = 6;
         a.lse = TensorView(wide.data(), DType::f32, {2, 2, 4});
       },
       {"out", "must not overlap the output lse"}},
  };
  for (std::size_t i = 0; i < forward_rows.size(); ++i) {
    AttentionForwardArgs a = c.forward_args();
    forward_rows[i].edit(a);
    SCOPED_TRACE(::testing::Message() << "forward row " << i);
    EXPECT_TRUE(throws_with_all([&] { attention_forward(a); }, forward_rows[i].parts));
  }
  const std::vector<BwdRow> backward_rows = {
      {[](auto& a) { a.heads = -2; }, {"attention_backward: heads must be >= 1, but got -2"}},
      {[](auto& a) { a.dout = TensorView(); }, {"dout must be present"}},
      {[](auto& a) { a.dout.shape[0] = 1; }, {"dout shape must equal q's shape"}},
      {[](auto& a) { a.dq.shape[2] = 3; }, {"dq shape must equal q's shape [2, 4, 6], but got [2, 4, 3]"}},
      {[](auto& a) { a.dk.dtype = DType::i32; }, {"dk dtype must be f32, bf16 or f16"}},
      {[](auto& a) { a.dv.strides[2] = 0; }, {"dv last dim must be contiguous"}},
      {[](auto& a) { a.lse.shape[1] = 3; }, {"lse must have shape [batch, heads, seq] = [2, 2, 4]"}},
      {[](auto& a) { a.dq = a.q; }, {"dq", "must not overlap the input q"}},
      {[](auto& a) { a.dk = a.dout; }, {"dk", "must not overlap the input dout"}},
      {[](auto& a) { a.dv = a.out; }, {"dv", "must not overlap the input out"}},
      {[](auto& a) {
         a.dv = TensorView(a.lse.data, DType::bf16, {2, 4, 6});
       },
       {"dv", "must not overlap the input lse"}},
      {[](auto& a) { a.dk = a.dq; }, {"dk", "must not overlap the output dq"}},
      {[](auto& a) {
         a.dv = a.dk;
         a.dq = TensorView();
       },
       {"dv", "must not overlap the output dk"}},
      {[](auto& a) { a.scale = INFINITY; }, {"attention_backward: scale must be finite"}},
  };
  for (std::size_t i = 0; i < backward_rows.size(); ++i) {
    AttentionBackwardArgs a = c.backward_args();
    backward_rows[i].edit(a);
    SCOPED_TRACE(::testing::Message() << "backward row " << i);
    EXPECT_TRUE(throws_with_all([&] { attention_backward(a); }, backward_rows[i].parts));
  }
  for (std::size_t i = 0; i < outputs.size(); ++i)
    EXPECT_EQ(outputs[i]->bytes, before[i]) << "output buffer " << i << " was written";
}

TEST(AttentionApi, KernelQueriesNameTheListEntries) {
  std::mt19937_64 rng(9);
  Case c = make_case(rng, {1, 3, 1, 2}, uniform_roles(DType::f16), 0);
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    SCOPED_TRACE(isa_name(isa));
    // The first entry this machine and the ISA cap allow: the vector kernel of the cap's level
    // (AMX has none of its own), else the generic one.
    const char* want_fwd = isa >= Isa::avx512 ? "attention_fwd_avx512"
                           : isa == Isa::avx2 ? "attention_fwd_avx2"
                                              : "attention_fwd_cpu";
    const char* want_bwd = isa >= Isa::avx512 ? "attention_bwd_avx512"
                           : isa == Isa::avx2 ? "attention_bwd_avx2"
                                              : "attention_bwd_cpu";
    EXPECT_STREQ(attention_kernel_name(c.forward_args()), want_fwd);
    EXPECT_STREQ(attention_kernel_name(c.backward_args()), want_bwd);
    const std::vector<KernelStatus> fwd = attention_kernel_statuses(c.forward_args());
    const auto list = ops::attention_forward_kernels();
    ASSERT_EQ(fwd.size(), list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(fwd[i].name, list[i].name);
      const char* why = ops::kernel_unavailable_reason(list[i].needs);
      EXPECT_EQ(fwd[i].declined, why != nullptr ? why : "") << list[i].name;
      EXPECT_EQ(fwd[i].selected, fwd[i].name == want_fwd) << list[i].name;
    }
    EXPECT_EQ(fwd.back().name, "attention_fwd_reference");
    EXPECT_EQ(attention_kernel_statuses(c.backward_args()).back().name, "attention_bwd_reference");
  }
  AttentionForwardArgs bad = c.forward_args();
  bad.heads = 3;
  EXPECT_TRUE(throws_with([&] { attention_kernel_statuses(bad); },
                          {"attention_forward: q's last dim (2) must be a multiple of heads (3)"}));
}

TEST(AttentionApi, EmptyBatchOrSequenceWritesNothing) {
  std::mt19937_64 rng(5);
  for (Shape s : {Shape{0, 3, 2, 2}, Shape{2, 0, 2, 2}}) {
    Case c = make_case(rng, s, uniform_roles(DType::f32), 0);
    EXPECT_NO_THROW(attention_forward(c.forward_args()));
    EXPECT_NO_THROW(attention_backward(c.backward_args()));
  }
}

}  // namespace
}  // namespace ampkit
