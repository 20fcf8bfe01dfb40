// The attention part of `ampkit check kernels` (tools layer, check/): causal attention forward
// (out, lse) and backward (dq, dk, dv from the reference's out and lse; plain and accumulating)
// over [batch, seq, heads x head_dim] shapes from 1 x 1 x 1 x 1 to sequences and heads longer than
// a vector, with uniform dtypes and a mix of all three, at the ISA under test and at the reference
// kernels; tolerances attention_* of error_bounds.hpp (the fp32 score, softmax and weighted sums).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/attention.hpp"
#include "tools/ampkit/check/check_families.hpp"
#include "tools/ampkit/check/check_run.hpp"

namespace ampkit::tools::check {
namespace {

namespace eb = error_bounds;

struct Shape {
  std::int64_t batch, seq, heads, head_dim;
};

// Dtypes of q, k, v, out, dout, dq, dk, dv.
struct Roles {
  DType q, k, v, out, dout, dq, dk, dv;
  const char* name;
};

// Every operand [batch, seq, heads * head_dim] contiguous; lse [batch, heads, seq].
struct Buffers {
  CheckTensor q, k, v, out, lse, dout, dq, dk, dv;
};

}  // namespace

void check_attention(Isa isa, std::uint64_t seed, bool quick, CheckResults& results) {
  const std::vector<Shape> shapes =
      quick ? std::vector<Shape>{{1, 1, 1, 1}, {1, 7, 2, 5}, {2, 33, 2, 17}}
            : std::vector<Shape>{{1, 1, 1, 1}, {1, 7, 2, 5}, {2, 33, 2, 17}, {1, 70, 1, 64}};
  constexpr DType f32 = DType::f32, bf16 = DType::bf16, f16 = DType::f16;
  const Roles roles[] = {{f32, f32, f32, f32, f32, f32, f32, f32, "f32"},
                         {bf16, bf16, bf16, bf16, bf16, bf16, bf16, bf16, "bf16"},
                         {f16, f16, f16, f16, f16, f16, f16, f16, "f16"},
                         {f32, bf16, f16, bf16, f16, f32, bf16, f16, "q f32 k bf16 v f16 out bf16 ..."}};
  std::mt19937_64 rng(seed ^ 0xa77);
  int index = 0;
  for (const Shape& s : shapes)
    for (const Roles& r : roles) {
      const bool accumulate = index++ % 2 == 1;
      const std::int64_t cols = s.heads * s.head_dim, n = s.batch * s.seq * cols;
      const auto at = [&](std::int64_t b, std::int64_t i, std::int64_t x) { return (b * s.seq + i) * cols + x; };
      const auto lse_at = [&](std::int64_t b, std::int64_t h, std::int64_t i) { return (b * s.heads + h) * s.seq + i; };
      Buffers in;
      in.q = CheckTensor(r.q, n), in.k = CheckTensor(r.k, n), in.v = CheckTensor(r.v, n);
      in.dout = CheckTensor(r.dout, n), in.out = CheckTensor(r.out, n);
      in.dq = CheckTensor(r.dq, n), in.dk = CheckTensor(r.dk, n), in.dv = CheckTensor(r.dv, n);
      in.lse = CheckTensor(DType::f32, s.batch * s.heads * s.seq);
      for (CheckTensor* t : {&in.q, &in.k, &in.v, &in.dout}) t->fill_normal(rng);
      for (CheckTensor* t : {&in.out, &in.lse}) t->poison();
      for (CheckTensor* t : {&in.dq, &in.dk, &in.dv}) accumulate ? t->fill_normal(rng) : t->poison();
      const auto v3 = [&](CheckTensor& t) { return view(t, {s.batch, s.seq, cols}); };
      const auto forward = [&](Buffers& x) {
        AttentionForwardArgs a;
        a.q = v3(x.q), a.k = v3(x.k), a.v = v3(x.v), a.out = v3(x.out);
        a.lse = view(x.lse, {s.batch, s.heads, s.seq}), a.heads = static_cast<int>(s.heads);
        return a;
      };
      const auto backward = [&](Buffers& x) {
        AttentionBackwardArgs a;
        a.q = v3(x.q), a.k = v3(x.k), a.v = v3(x.v), a.out = v3(x.out), a.dout = v3(x.dout);
        a.lse = view(x.lse, {s.batch, s.heads, s.seq}), a.heads = static_cast<int>(s.heads);
        a.dq = v3(x.dq), a.dk = v3(x.dk), a.dv = v3(x.dv), a.accumulate = accumulate;
        return a;
      };
      char what[128];
      std::snprintf(what, sizeof what, "[%lld, %lld, %lld x %lld] %s", static_cast<long long>(s.batch),
                    static_cast<long long>(s.seq), static_cast<long long>(s.heads), static_cast<long long>(s.head_dim),
                    r.name);
      Buffers want = in, got = in;
      std::string kernel;
      run_reference([&] { attention_forward(forward(want)); });
      run_at(isa, [&] {
        kernel = attention_kernel_name(forward(got));
        attention_forward(forward(got));
      });
      const eb::AttentionShape shape{s.batch, s.seq, s.heads, s.head_dim,
                                     static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)))};
      const auto operand = [&](const Buffers& x, char which) -> const CheckTensor& {
        return which == 'q' ? x.q : which == 'k' ? x.k : which == 'v' ? x.v : which == 'o' ? x.out : x.dout;
      };
      std::map<std::string, Deviation> dev;
      eb::attention_bounds(
          shape, false,
          [&](char w, std::int64_t b, std::int64_t i, std::int64_t x) { return operand(in, w).get(at(b, i, x)); },
          [&](std::int64_t, std::int64_t, std::int64_t) { return 0.0; },
          [&](char, std::int64_t b, std::int64_t i, std::int64_t x, double err) {
            const std::int64_t e = at(b, i, x);
            dev["out"].add(got.out.get(e), want.out.get(e), eb::attention_output(err, want.out.get(e), r.out));
          },
          [&](std::int64_t b, std::int64_t h, std::int64_t i, double err) {
            const std::int64_t e = lse_at(b, h, i);
            dev["lse"].add(got.lse.get(e), want.lse.get(e), eb::attention_lse(err, want.lse.get(e)));
          });
      record(results, "attention_forward", kernel, what, dev);
      // Backward from the reference's out and lse.
      Buffers bin = in;
      bin.out = want.out, bin.lse = want.lse;
      Buffers bwant = bin, bgot = bin;
      run_reference([&] { attention_backward(backward(bwant)); });
      run_at(isa, [&] {
        kernel = attention_kernel_name(backward(bgot));
        attention_backward(backward(bgot));
      });
      std::map<std::string, Deviation> bdev;
      eb::attention_bounds(
          shape, true,
          [&](char w, std::int64_t b, std::int64_t i, std::int64_t x) { return operand(bin, w).get(at(b, i, x)); },
          [&](std::int64_t b, std::int64_t h, std::int64_t i) { return bin.lse.get(lse_at(b, h, i)); },
          [&](char w, std::int64_t b, std::int64_t i, std::int64_t x, double err) {
            const std::int64_t e = at(b, i, x);
            const CheckTensor& g = w == 'q' ? bgot.dq : w == 'k' ? bgot.dk : bgot.dv;
            const CheckTensor& ref = w == 'q' ? bwant.dq : w == 'k' ? bwant.dk : bwant.dv;
            bdev[std::string("d") + w].add(g.get(e), ref.get(e),
                                           eb::attention_gradient_output(err, ref.get(e), ref.dtype));
          },
          [&](std::int64_t, std::int64_t, std::int64_t, double) {});
      record(results, "attention_backward", kernel, std::string(what) + (accumulate ? " accumulate" : ""), bdev);
    }
}

}  // namespace ampkit::tools::check
