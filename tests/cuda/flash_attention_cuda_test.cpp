// The flash attention kernels on CUDA (attention_fwd_flash_cuda / attention_bwd_flash_cuda,
// src/cuda/attention/flash_attention_cuda.cu) against the CPU's double reference, within the bound
// of docs/ATTENTION.md ("Flash kernels on the GPU"): the fp32 kernel's bound of error_bounds.hpp
// times 4 (tensor-core accumulation, the base-2 exponent with the folded scale) plus the one
// rounding of P and dS to the operand dtype before their products. Fresh random inputs over the
// edge shapes (seq 1 to 1000 around the 16/64-row tiles, head dims 32/64/128, one and several
// heads, batch > 1), packed-QKV slices and separate tensors, f32 or 16-bit outputs, accumulate
// on and off, bf16 and f16; every result twice, bit for bit; the declines for the rest. Skips
// (saying why) without a usable GPU.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/attention.hpp"
#include "cuda_test_support.hpp"

namespace ampkit::cuda_test {
namespace {

struct FlashCase {
  std::int64_t batch, seq, heads, head_dim;
  bool packed;     // q, k, v (and dq, dk, dv) column slices of one [batch, seq, 3 C] buffer
  DType out_type;  // of out and of dq, dk, dv (the operands' 16-bit dtype or f32)
  bool accumulate;
};

// Operand `part` (0 q, 1 k, 2 v) of a [batch, seq, parts * c] buffer at `base`.
TensorView slice(void* base, DType t, const FlashCase& s, int parts, int part, Device dev) {
  const std::int64_t c = s.heads * s.head_dim;
  TensorView v(static_cast<unsigned char*>(base) + part * c * static_cast<std::int64_t>(dtype_size(t)), t,
               {s.batch, s.seq, c}, dev);
  v.strides[0] = s.seq * parts * c;
  v.strides[1] = parts * c;
  v.strides[2] = 1;
  return v;
}

// Host operands and the reference results of one case.
struct FlashData {
  HostArray q, k, v, dout, old_grads;  // q/k/v/old_grads: [3][batch, seq, C] stacked when !packed
  HostArray out_ref, lse_ref, grads_ref;
};

// The six views of one call over buffers at qkv (inputs), grads, out, dout, lse.
struct Views {
  TensorView q, k, v, dq, dk, dv, out, dout, lse;
};
Views views(const FlashCase& s, DType t, void* qkv, void* grads, void* out, void* dout, void* lse, Device dev) {
  const std::int64_t c = s.heads * s.head_dim, n = s.batch * s.seq * c;
  Views w;
  const auto part = [&](void* base, DType dt, int i) {
    if (s.packed) return slice(base, dt, s, 3, i, dev);
    return slice(static_cast<unsigned char*>(base) + i * n * static_cast<std::int64_t>(dtype_size(dt)), dt, s, 1, 0,
                 dev);
  };
  w.q = part(qkv, t, 0);
  w.k = part(qkv, t, 1);
  w.v = part(qkv, t, 2);
  w.dq = part(grads, s.out_type, 0);
  w.dk = part(grads, s.out_type, 1);
  w.dv = part(grads, s.out_type, 2);
  w.out = TensorView(out, s.out_type, {s.batch, s.seq, c}, dev);
  w.dout = TensorView(dout, t, {s.batch, s.seq, c}, dev);
  w.lse = TensorView(lse, DType::f32, {s.batch, s.heads, s.seq}, dev);
  return w;
}
AttentionForwardArgs forward_args(const Views& w, const FlashCase& s) {
  AttentionForwardArgs f;
  f.q = w.q;
  f.k = w.k;
  f.v = w.v;
  f.out = w.out;
  f.lse = w.lse;
  f.heads = static_cast<int>(s.heads);
  return f;
}
AttentionBackwardArgs backward_args(const Views& w, const FlashCase& s) {
  AttentionBackwardArgs b;
  b.q = w.q;
  b.k = w.k;
  b.v = w.v;
  b.out = w.out;
  b.lse = w.lse;
  b.dout = w.dout;
  b.dq = w.dq;
  b.dk = w.dk;
  b.dv = w.dv;
  b.heads = static_cast<int>(s.heads);
  b.accumulate = s.accumulate;
  return b;
}

// Element index of (b, i, col) of operand part in the qkv / grads layout.
std::int64_t index_of(const FlashCase& s, int part, std::int64_t b, std::int64_t i, std::int64_t col) {
  const std::int64_t c = s.heads * s.head_dim, row = b * s.seq + i;
  return s.packed ? row * 3 * c + part * c + col : part * s.batch * s.seq * c + row * c + col;
}

// The flash kernels' extra error over the fp32 bound (docs/ATTENTION.md): P rounded once to the
// operand dtype (relative u16, absolute tiny below its normal range) in out = P V / l and
// dV = P^T dO; dS rounded likewise in dQ = s dS K and dK = s dS^T Q. From the double values.
struct Extra {
  std::vector<double> out, dq, dk, dv;
};
Extra flash_extra(const FlashCase& s, DType t, const FlashData& x) {
  const std::int64_t c = s.heads * s.head_dim, d = s.head_dim, T = s.seq;
  const double u16 = unit_roundoff(t), tiny = t == DType::f16 ? 0x1p-25 : 0x1p-134;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Extra e;
  const auto rows = static_cast<std::size_t>(s.batch * T * c);
  e.out.assign(rows, 0.0);
  e.dq.assign(rows, 0.0);
  e.dk.assign(rows, 0.0);
  e.dv.assign(rows, 0.0);
  std::vector<double> p(static_cast<std::size_t>(T * T)), ds(static_cast<std::size_t>(T * T));
  const auto at = [&](const HostArray& a, int part, std::int64_t b, std::int64_t i, std::int64_t col) {
    return static_cast<double>(a.get(index_of(s, part, b, i, col)));
  };
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (std::int64_t h = 0; h < s.heads; ++h) {
      const std::int64_t c0 = h * d;
      for (std::int64_t i = 0; i < T; ++i) {
        const double lse = x.lse_ref.get((b * s.heads + h) * T + i);
        double delta = 0.0;
        for (std::int64_t col = c0; col < c0 + d; ++col)
          delta += x.dout.get((b * T + i) * c + col) * static_cast<double>(x.out_ref.get((b * T + i) * c + col));
        for (std::int64_t j = 0; j <= i; ++j) {
          double dot = 0.0, dp = 0.0;
          for (std::int64_t col = c0; col < c0 + d; ++col) {
            dot += at(x.q, 0, b, i, col) * at(x.q, 1, b, j, col);
            dp += x.dout.get((b * T + i) * c + col) * at(x.q, 2, b, j, col);
          }
          const double pij = std::exp(scale * dot - lse);
          p[i * T + j] = pij;
          ds[i * T + j] = pij * (dp - delta);
        }
      }
      for (std::int64_t r = 0; r < T; ++r)
        for (std::int64_t col = c0; col < c0 + d; ++col) {
          double eo = 0.0, eq = 0.0, ek = 0.0, ev = 0.0;
          for (std::int64_t j = 0; j <= r; ++j) {
            const double vj = std::fabs(at(x.q, 2, b, j, col)), kj = std::fabs(at(x.q, 1, b, j, col));
            eo += u16 * p[r * T + j] * vj + tiny * vj;
            eq += (u16 * std::fabs(ds[r * T + j]) + tiny) * kj;
          }
          for (std::int64_t i = r; i < T; ++i) {
            const double g = std::fabs(x.dout.get((b * T + i) * c + col)), qi = std::fabs(at(x.q, 0, b, i, col));
            ek += (u16 * std::fabs(ds[i * T + r]) + tiny) * qi;
            ev += (u16 * p[i * T + r] + tiny) * g;
          }
          const auto e_row = static_cast<std::size_t>((b * T + r) * c + col);
          e.out[e_row] = eo;
          e.dq[e_row] = scale * eq;
          e.dk[e_row] = scale * ek;
          e.dv[e_row] = ev;
        }
    }
  return e;
}

int report(const std::string& where, const char* what, std::int64_t i, double got, double want, double bound,
           int& bad) {
  if (std::isfinite(got) && std::fabs(got - want) <= bound) return 0;
  if (++bad <= 3)
    ADD_FAILURE() << where << ": " << what << "[" << i << "] = " << got << ", want " << want << " (bound " << bound
                  << ")";
  return 1;
}

void check_flash(DType t, const FlashCase& s, std::mt19937_64& rng, std::uint64_t seed) {
  const std::int64_t c = s.heads * s.head_dim, n = s.batch * s.seq * c;
  const std::string where = std::string(dtype_name(t)) + " batch=" + std::to_string(s.batch) +
                            " seq=" + std::to_string(s.seq) + " heads=" + std::to_string(s.heads) +
                            " head_dim=" + std::to_string(s.head_dim) + (s.packed ? " packed" : " separate") +
                            " out=" + std::string(dtype_name(s.out_type)) + (s.accumulate ? " accumulate" : "") +
                            " seed=" + std::to_string(seed);
  FlashData x;
  x.q = HostArray(t, 3 * n);
  x.dout = HostArray(t, n);
  x.old_grads = HostArray(s.out_type, 3 * n);
  x.out_ref = HostArray(s.out_type, n);
  x.lse_ref = HostArray(DType::f32, s.batch * s.heads * s.seq);
  fill_random(x.q, rng, -2.0f, 2.0f);
  fill_random(x.dout, rng);
  fill_random(x.old_grads, rng);
  x.grads_ref = x.old_grads;
  {
    ReferenceOnly reference;
    const Views w =
        views(s, t, x.q.data(), x.grads_ref.data(), x.out_ref.data(), x.dout.data(), x.lse_ref.data(), Device::cpu);
    attention_forward(forward_args(w, s));
    attention_backward(backward_args(w, s));
  }
  HostArray out_gpu[2], lse_gpu[2], grads_gpu[2];
  for (int run = 0; run < 2; ++run) {
    DeviceArray d_qkv(x.q), d_grads(x.old_grads), d_out(x.out_ref.bytes.size(), 0x7f),
        d_lse(x.lse_ref.bytes.size(), 0x7f), d_out_ref(x.out_ref), d_lse_ref(x.lse_ref), d_dout(x.dout);
    const Views fw = views(s, t, d_qkv.get(), d_grads.get(), d_out.get(), d_dout.get(), d_lse.get(), Device::cuda);
    const AttentionForwardArgs f = forward_args(fw, s);
    EXPECT_EQ(std::string(attention_kernel_name(f)), std::string("attention_fwd_flash_cuda")) << where;
    attention_forward(f);
    // The backward from the reference's out and lse, as the reference's backward.
    const Views bw =
        views(s, t, d_qkv.get(), d_grads.get(), d_out_ref.get(), d_dout.get(), d_lse_ref.get(), Device::cuda);
    const AttentionBackwardArgs b = backward_args(bw, s);
    EXPECT_EQ(std::string(attention_kernel_name(b)), std::string("attention_bwd_flash_cuda")) << where;
    attention_backward(b);
    out_gpu[run] = d_out.to_host(s.out_type);
    lse_gpu[run] = d_lse.to_host(DType::f32);
    grads_gpu[run] = d_grads.to_host(s.out_type);
  }
  const Extra extra = flash_extra(s, t, x);
  const error_bounds::AttentionShape shape{s.batch, s.seq, s.heads, s.head_dim, 1.0 / std::sqrt(double(s.head_dim))};
  const auto get_from = [&](bool backward) {
    return [&, backward](char which, std::int64_t b, std::int64_t i, std::int64_t col) -> double {
      const std::int64_t row = b * s.seq + i;
      switch (which) {
        case 'q': return x.q.get(index_of(s, 0, b, i, col));
        case 'k': return x.q.get(index_of(s, 1, b, i, col));
        case 'v': return x.q.get(index_of(s, 2, b, i, col));
        case 'o': return x.out_ref.get(row * c + col);
        default: return backward ? x.dout.get(row * c + col) : 0.0;
      }
    };
  };
  int bad = 0;
  constexpr double kSlack = 4.0;  // on the fp32 kernel's bound (see the file comment)
  error_bounds::attention_bounds(
      shape, false, get_from(false), [](std::int64_t, std::int64_t, std::int64_t) { return 0.0; },
      [&](char, std::int64_t b, std::int64_t i, std::int64_t col, double err) {
        const std::int64_t e = (b * s.seq + i) * c + col;
        const double bound = error_bounds::attention_output(kSlack * err + extra.out[static_cast<std::size_t>(e)],
                                                            x.out_ref.get(e), s.out_type);
        report(where, "out", e, out_gpu[0].get(e), x.out_ref.get(e), bound, bad);
      },
      [&](std::int64_t b, std::int64_t h, std::int64_t i, double err) {
        const std::int64_t e = (b * s.heads + h) * s.seq + i;
        const double bound = kSlack * err + 8.0 * error_bounds::kU32 * std::fabs(x.lse_ref.get(e));
        report(where, "lse", e, lse_gpu[0].get(e), x.lse_ref.get(e), bound, bad);
      });
  error_bounds::attention_bounds(
      shape, true, get_from(true),
      [&](std::int64_t b, std::int64_t h, std::int64_t i) -> double {
        return x.lse_ref.get((b * s.heads + h) * s.seq + i);
      },
      [&](char which, std::int64_t b, std::int64_t i, std::int64_t col, double err) {
        const int part = which == 'q' ? 0 : which == 'k' ? 1 : 2;
        const std::int64_t e = index_of(s, part, b, i, col);
        const auto r = static_cast<std::size_t>((b * s.seq + i) * c + col);
        const double more = part == 0 ? extra.dq[r] : part == 1 ? extra.dk[r] : extra.dv[r];
        const double old = s.accumulate ? std::fabs(x.old_grads.get(e)) : 0.0;
        const double bound = error_bounds::attention_gradient_output(
            kSlack * err + more + 2.0 * error_bounds::kU32 * old, x.grads_ref.get(e), s.out_type);
        report(where,
               part == 0   ? "dq"
               : part == 1 ? "dk"
                           : "dv",
               e, grads_gpu[0].get(e), x.grads_ref.get(e), bound, bad);
      },
      [](std::int64_t, std::int64_t, std::int64_t, double) {});
  EXPECT_TRUE(bad == 0) << where << ": " << bad << " elements off the bound";
  EXPECT_TRUE(out_gpu[0].bytes == out_gpu[1].bytes) << where << ": out differs between two runs";
  EXPECT_TRUE(lse_gpu[0].bytes == lse_gpu[1].bytes) << where << ": lse differs between two runs";
  EXPECT_TRUE(grads_gpu[0].bytes == grads_gpu[1].bytes) << where << ": dq/dk/dv differ between two runs";
}

}  // namespace

TEST(CudaFlashAttention, MatchesTheReferenceOverEdgeShapes) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  int k = 0;
  for (DType t : {DType::bf16, DType::f16}) {
    for (std::int64_t seq : {1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255})
      for (std::int64_t d : {32, 64, 128}) {
        ++k;
        const FlashCase s{seq <= 65 ? 2 : 1,           seq,       k % 2 == 0 ? 3 : 1, d, k % 3 != 0,
                          k % 4 == 1 ? DType::f32 : t, k % 2 == 1};
        check_flash(t, s, rng, seed);
      }
    check_flash(t, {1, 1000, 2, 64, true, t, true}, rng, seed);
    check_flash(t, {1, 1000, 1, 128, false, DType::f32, false}, rng, seed);
  }
}

TEST(CudaFlashAttention, DeclinesWhatItDoesNotTake) {
  AMPKIT_REQUIRE_GPU();
  const auto first_reason = [](DType t, std::int64_t d, std::int64_t offset) {
    const std::int64_t c = 2 * d;
    DeviceArray qkv(static_cast<std::size_t>(4 * 8 * 3 * c + 8) * 4, 0),
        out(static_cast<std::size_t>(4 * 8 * c) * 4, 0), lse(4 * 2 * 8 * 4, 0);
    TensorView packed(static_cast<unsigned char*>(qkv.get()) + offset * static_cast<std::int64_t>(dtype_size(t)), t,
                      {4, 8, 3 * c}, Device::cuda);
    AttentionForwardArgs f;
    f.q = packed;
    f.q.shape[2] = c;
    f.k = f.q;
    f.v = f.q;
    f.out = TensorView(out.get(), t, {4, 8, c}, Device::cuda);
    f.lse = TensorView(lse.get(), DType::f32, {4, 2, 8}, Device::cuda);
    f.heads = 2;
    const std::vector<KernelStatus> st = attention_kernel_statuses(f);
    return st.empty() ? std::string("no kernels") : st.front().name + ": " + st.front().declined;
  };
  const std::string f32 = first_reason(DType::f32, 64, 0), d48 = first_reason(DType::bf16, 48, 0),
                    odd = first_reason(DType::f16, 64, 1), ok = first_reason(DType::bf16, 64, 0);
  EXPECT_TRUE(f32.find("16-bit dtype") != std::string::npos) << f32;
  EXPECT_TRUE(d48.find("head_dim is not 32, 64 or 128") != std::string::npos) << d48;
  EXPECT_TRUE(odd.find("16-byte aligned") != std::string::npos) << odd;
  EXPECT_TRUE(ok == "attention_fwd_flash_cuda: ") << ok;
}

}  // namespace ampkit::cuda_test
