// The training-graph ops on CUDA against the CPU (tests/cuda/): convert (every dtype pair),
// add, embedding forward/backward, GELU forward/backward (both variants), softmax
// cross-entropy forward/backward and causal attention forward/backward (packed QKV slices, as
// the graph passes them), over edge shapes and the dtypes f32, bf16, f16. Exact ops (convert,
// add, embedding: one fp32 result rounded once, sums in token order) must give the CPU kernel's
// bits; the others stay within the bounds of include/ampkit/numerics/error_bounds.hpp against
// the double reference (the CPU kernels are held to the same bounds). Every GPU result is
// computed twice and must be identical bit for bit. Skips (saying why) without a usable GPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/activation.hpp"
#include "ampkit/ops/attention.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/embedding.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "ampkit/ops/softmax_cross_entropy.hpp"
#include "cuda_test_support.hpp"

namespace ampkit::cuda_test {
namespace {

constexpr DType kDtypes[] = {DType::f32, DType::bf16, DType::f16};

TensorView host_view(HostArray& a, std::initializer_list<std::int64_t> shape) {
  return TensorView(a.data(), a.t, shape);
}
TensorView device_view(const DeviceArray& a, DType t, std::initializer_list<std::int64_t> shape) {
  return TensorView(a.get(), t, shape, Device::cuda);
}

bool within(double got, double want, double bound) {
  return std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= bound;
}

// Counts (and reports the first three of) the elements of `got` off `want` by more than bound(i).
template <class Bound>
int compare(const std::string& where, const char* what, const HostArray& got, const HostArray& want, Bound bound) {
  int bad = 0;
  for (std::int64_t i = 0; i < want.size(); ++i) {
    const double g = got.get(i), w = want.get(i), b = bound(i);
    if (within(g, w, b)) continue;
    if (++bad <= 3)
      ADD_FAILURE() << where << ": " << what << "[" << i << "] = " << g << ", want " << w << " (bound " << b << ")";
  }
  return bad;
}

// Reports unless two GPU runs gave the same bytes.
void expect_same_bits(const std::string& where, const char* what, const HostArray& a, const HostArray& b) {
  EXPECT_TRUE(a.bytes == b.bytes) << where << ": " << what << " differs between two runs of the same call";
}

// Reports unless the GPU gave the CPU kernel's bytes.
void expect_cpu_bits(const std::string& where, const char* what, const HostArray& gpu, const HostArray& cpu) {
  int first = -1;
  for (std::int64_t i = 0; i < cpu.size() && first < 0; ++i)
    if (std::memcmp(&gpu.bytes[static_cast<std::size_t>(i) * dtype_size(cpu.t)],
                    &cpu.bytes[static_cast<std::size_t>(i) * dtype_size(cpu.t)], dtype_size(cpu.t)) != 0)
      first = static_cast<int>(i);
  EXPECT_TRUE(first < 0) << where << ": " << what << "[" << first << "] = " << (first < 0 ? 0.0f : gpu.get(first))
                         << " on cuda, " << (first < 0 ? 0.0f : cpu.get(first))
                         << " on the cpu (the same bits expected)";
}

std::string dtypes_text(std::initializer_list<DType> ts) {
  std::string s;
  for (DType t : ts) {
    if (!s.empty()) s += '/';
    s += dtype_name(t);
  }
  return s;
}

}  // namespace

TEST(CudaGraphOps, ConvertEveryDtypePairGivesTheCpuBits) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (DType from : kDtypes)
    for (DType to : kDtypes)
      for (std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1000}, std::int64_t{100003}}) {
        const std::string where = dtypes_text({from, to}) + " n=" + std::to_string(n) + " seed=" + std::to_string(seed);
        HostArray src(from, n), cpu(to, n);
        fill_random(src, rng, -70000.0f, 70000.0f, true);  // f16 overflow and subnormals
        for (std::int64_t i = 0; i < n; i += 5) src.set(i, src.get(i) * 0x1p-20f);
        convert(host_view(src, {n}), host_view(cpu, {n}));
        HostArray gpu[kRuns];
        for (int run = 0; run < kRuns; ++run) {
          ReferenceOnly cuda_reference(run == kCudaReference);
          HostArray& g = gpu[run];
          DeviceArray d_src(src), d_dst(cpu.bytes.size(), 0x7f);
          convert(device_view(d_src, from, {n}), device_view(d_dst, to, {n}));
          g = d_dst.to_host(to);
        }
        expect_cpu_bits(where, "dst", gpu[0], cpu);
        expect_same_bits(where, "dst", gpu[0], gpu[1]);
        expect_cpu_bits(where, "dst of convert_ref_cuda", gpu[kCudaReference], cpu);  // convert is exact
      }
}

TEST(CudaGraphOps, AddGivesTheCpuBits) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const DType mixes[][3] = {{DType::f32, DType::f32, DType::f32},
                            {DType::bf16, DType::bf16, DType::bf16},
                            {DType::f16, DType::f16, DType::f16},
                            {DType::bf16, DType::f32, DType::f32},
                            {DType::f16, DType::bf16, DType::f32}};
  for (const auto& mix : mixes)
    for (const auto& [rows, n] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 7}, {65, 1000}}) {
      const std::string where = dtypes_text({mix[0], mix[1], mix[2]}) + " " + std::to_string(rows) + "x" +
                                std::to_string(n) + " seed=" + std::to_string(seed);
      HostArray a(mix[0], rows * n), b(mix[1], rows * n), cpu(mix[2], rows * n);
      fill_random(a, rng, -3.0f, 3.0f);
      fill_random(b, rng, -3.0f, 3.0f);
      add(host_view(a, {rows, n}), host_view(b, {rows, n}), host_view(cpu, {rows, n}));
      HostArray gpu[kRuns];
      for (int run = 0; run < kRuns; ++run) {
        ReferenceOnly cuda_reference(run == kCudaReference);
        HostArray& g = gpu[run];
        DeviceArray da(a), db(b), dout(cpu.bytes.size(), 0x7f);
        add(device_view(da, mix[0], {rows, n}), device_view(db, mix[1], {rows, n}),
            device_view(dout, mix[2], {rows, n}));
        g = dout.to_host(mix[2]);
      }
      expect_cpu_bits(where, "out", gpu[0], cpu);
      expect_same_bits(where, "out", gpu[0], gpu[1]);
      expect_cpu_bits(where, "out of elementwise_ref_cuda", gpu[kCudaReference], cpu);  // add is exact
    }
}

TEST(CudaGraphOps, EmbeddingGivesTheCpuBits) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  struct Shape {
    std::int64_t tokens, vocab, dim;
  };
  // Repeated ids (vocab < tokens), rows no id hits (vocab > tokens), one token, wide rows.
  const Shape shapes[] = {{1, 1, 1}, {12, 5, 3}, {40, 300, 17}, {2000, 65, 129}, {5, 3, 1000}};
  for (DType table_t : kDtypes)
    for (DType out_t : {table_t, DType::f32})
      for (const Shape& s : shapes)
        for (bool accumulate : {false, true}) {
          const std::string where = dtypes_text({table_t, out_t}) + " tokens=" + std::to_string(s.tokens) +
                                    " vocab=" + std::to_string(s.vocab) + " dim=" + std::to_string(s.dim) +
                                    (accumulate ? " accumulate" : "") + " seed=" + std::to_string(seed);
          HostArray ids(DType::i32, s.tokens), table(table_t, s.vocab * s.dim), out(out_t, s.tokens * s.dim),
              dout(out_t, s.tokens * s.dim), dtable(table_t, s.vocab * s.dim);
          auto* id = static_cast<std::int32_t*>(ids.data());
          for (std::int64_t t = 0; t < s.tokens; ++t) id[t] = static_cast<std::int32_t>(rng() % s.vocab);
          fill_random(table, rng);
          fill_random(dout, rng);
          fill_random(dtable, rng);
          // The CPU's fast kernel and its reference entry (which the CUDA reference entry runs on
          // host copies) may add a row's contributions in different orders: compare each CUDA
          // entry with its own CPU counterpart.
          HostArray out_cpu = out, dtable_cpu = dtable, out_cpu_ref = out, dtable_cpu_ref = dtable;
          for (bool reference : {false, true}) {
            ReferenceOnly cpu_reference(reference);
            embedding_forward(host_view(ids, {s.tokens}), host_view(table, {s.vocab, s.dim}),
                              host_view(reference ? out_cpu_ref : out_cpu, {s.tokens, s.dim}));
            embedding_backward(host_view(ids, {s.tokens}), host_view(dout, {s.tokens, s.dim}),
                               host_view(reference ? dtable_cpu_ref : dtable_cpu, {s.vocab, s.dim}), accumulate);
          }
          HostArray out_gpu[kRuns], dtable_gpu[kRuns];
          for (int run = 0; run < kRuns; ++run) {
            ReferenceOnly cuda_reference(run == kCudaReference);
            DeviceArray d_ids(ids), d_table(table), d_out(out.bytes.size(), 0x7f), d_dout(dout), d_dtable(dtable);
            embedding_forward(device_view(d_ids, DType::i32, {s.tokens}),
                              device_view(d_table, table_t, {s.vocab, s.dim}),
                              device_view(d_out, out_t, {s.tokens, s.dim}));
            embedding_backward(device_view(d_ids, DType::i32, {s.tokens}),
                               device_view(d_dout, out_t, {s.tokens, s.dim}),
                               device_view(d_dtable, table_t, {s.vocab, s.dim}), accumulate);
            out_gpu[run] = d_out.to_host(out_t);
            dtable_gpu[run] = d_dtable.to_host(table_t);
          }
          expect_cpu_bits(where, "out", out_gpu[0], out_cpu);
          expect_cpu_bits(where, "dtable", dtable_gpu[0], dtable_cpu);
          expect_same_bits(where, "out", out_gpu[0], out_gpu[1]);
          expect_same_bits(where, "dtable", dtable_gpu[0], dtable_gpu[1]);
          expect_cpu_bits(where, "out of embedding_fwd_ref_cuda", out_gpu[kCudaReference], out_cpu_ref);
          expect_cpu_bits(where, "dtable of embedding_bwd_ref_cuda", dtable_gpu[kCudaReference], dtable_cpu_ref);
        }
}

TEST(CudaGraphOps, GeluMatchesTheReference) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (DType x_t : kDtypes)
    for (DType out_t : {x_t, DType::f32})
      for (GeluVariant variant : {GeluVariant::tanh, GeluVariant::erf})
        for (const auto& [rows, n] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 7}, {64, 1000}}) {
          const std::string where = dtypes_text({x_t, out_t}) + (variant == GeluVariant::tanh ? " tanh " : " erf ") +
                                    std::to_string(rows) + "x" + std::to_string(n) + " seed=" + std::to_string(seed);
          HostArray x(x_t, rows * n), dy(out_t, rows * n), y_ref(out_t, rows * n), dx_ref(out_t, rows * n);
          fill_random(x, rng, -6.0f, 6.0f);
          fill_random(dy, rng, -2.0f, 2.0f);
          {
            ReferenceOnly reference;
            gelu_forward(host_view(x, {rows, n}), host_view(y_ref, {rows, n}), variant);
            gelu_backward(host_view(x, {rows, n}), host_view(dy, {rows, n}), host_view(dx_ref, {rows, n}), variant);
          }
          HostArray y_gpu[kRuns], dx_gpu[kRuns];
          for (int run = 0; run < kRuns; ++run) {
            ReferenceOnly cuda_reference(run == kCudaReference);
            DeviceArray d_x(x), d_dy(dy), d_y(y_ref.bytes.size(), 0x7f), d_dx(dx_ref.bytes.size(), 0x7f);
            gelu_forward(device_view(d_x, x_t, {rows, n}), device_view(d_y, out_t, {rows, n}), variant);
            gelu_backward(device_view(d_x, x_t, {rows, n}), device_view(d_dy, out_t, {rows, n}),
                          device_view(d_dx, out_t, {rows, n}), variant);
            y_gpu[run] = d_y.to_host(out_t);
            dx_gpu[run] = d_dx.to_host(out_t);
          }
          compare(where, "y", y_gpu[0], y_ref,
                  [&](std::int64_t i) { return error_bounds::gelu_forward_output(x.get(i), y_ref.get(i), out_t); });
          compare(where, "dx", dx_gpu[0], dx_ref,
                  [&](std::int64_t i) { return error_bounds::gelu_backward_output(dy.get(i), dx_ref.get(i), out_t); });
          expect_same_bits(where, "y", y_gpu[0], y_gpu[1]);
          expect_same_bits(where, "dx", dx_gpu[0], dx_gpu[1]);
          expect_cpu_bits(where, "y of gelu_ref_cuda", y_gpu[kCudaReference], y_ref);
          expect_cpu_bits(where, "dx of gelu_ref_cuda", dx_gpu[kCudaReference], dx_ref);
        }
}

TEST(CudaGraphOps, SoftmaxCrossEntropyMatchesTheReference) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (DType logits_t : kDtypes)
    for (const auto& [rows, classes] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {5, 3}, {33, 1000}, {7, 5000}}) {
      const std::string where = std::string(dtype_name(logits_t)) + " rows=" + std::to_string(rows) +
                                " classes=" + std::to_string(classes) + " seed=" + std::to_string(seed);
      HostArray logits(logits_t, rows * classes), targets(DType::i32, rows), lse_ref(DType::f32, rows),
          loss_ref(DType::f32, 1), dlogits_ref(logits_t, rows * classes);
      fill_random(logits, rng, -8.0f, 8.0f);
      auto* t = static_cast<std::int32_t*>(targets.data());
      for (std::int64_t r = 0; r < rows; ++r) t[r] = static_cast<std::int32_t>(rng() % classes);
      const float dloss = 0.75f;
      {
        ReferenceOnly reference;
        softmax_cross_entropy_forward(host_view(logits, {rows, classes}), host_view(targets, {rows}),
                                      TensorView(loss_ref.data(), DType::f32, {}), host_view(lse_ref, {rows}));
        softmax_cross_entropy_backward(host_view(logits, {rows, classes}), host_view(targets, {rows}),
                                       host_view(lse_ref, {rows}), dloss, host_view(dlogits_ref, {rows, classes}));
      }
      HostArray lse_gpu[kRuns], loss_gpu[kRuns], dlogits_gpu[kRuns];
      for (int run = 0; run < kRuns; ++run) {
        ReferenceOnly cuda_reference(run == kCudaReference);
        DeviceArray d_logits(logits), d_targets(targets), d_lse(lse_ref.bytes.size(), 0x7f), d_loss(4, 0x7f),
            d_lse_ref(lse_ref), d_dlogits(dlogits_ref.bytes.size(), 0x7f);
        softmax_cross_entropy_forward(device_view(d_logits, logits_t, {rows, classes}),
                                      device_view(d_targets, DType::i32, {rows}), device_view(d_loss, DType::f32, {}),
                                      device_view(d_lse, DType::f32, {rows}));
        // The backward from the reference's lse, as the reference's backward.
        softmax_cross_entropy_backward(
            device_view(d_logits, logits_t, {rows, classes}), device_view(d_targets, DType::i32, {rows}),
            device_view(d_lse_ref, DType::f32, {rows}), dloss, device_view(d_dlogits, logits_t, {rows, classes}));
        lse_gpu[run] = d_lse.to_host(DType::f32);
        loss_gpu[run] = d_loss.to_host(DType::f32);
        dlogits_gpu[run] = d_dlogits.to_host(logits_t);
      }
      double worst_lse = 0.0;
      compare(where, "lse", lse_gpu[0], lse_ref, [&](std::int64_t r) {
        const double b = error_bounds::cross_entropy_lse(classes, lse_ref.get(r));
        worst_lse = std::max(worst_lse, b);
        return b;
      });
      compare(where, "loss", loss_gpu[0], loss_ref,
              [&](std::int64_t) { return error_bounds::cross_entropy_loss(worst_lse, loss_ref.get(0)); });
      const double scale = dloss / static_cast<double>(rows);
      compare(where, "dlogits", dlogits_gpu[0], dlogits_ref, [&](std::int64_t i) {
        return error_bounds::cross_entropy_dlogits(scale, logits.get(i), lse_ref.get(i / classes), dlogits_ref.get(i),
                                                   logits_t);
      });
      expect_same_bits(where, "lse", lse_gpu[0], lse_gpu[1]);
      expect_same_bits(where, "loss", loss_gpu[0], loss_gpu[1]);
      expect_same_bits(where, "dlogits", dlogits_gpu[0], dlogits_gpu[1]);
      expect_cpu_bits(where, "lse of softmax_cross_entropy_fwd_ref_cuda", lse_gpu[kCudaReference], lse_ref);
      expect_cpu_bits(where, "loss of softmax_cross_entropy_fwd_ref_cuda", loss_gpu[kCudaReference], loss_ref);
      expect_cpu_bits(where, "dlogits of softmax_cross_entropy_bwd_ref_cuda", dlogits_gpu[kCudaReference], dlogits_ref);
    }
}

namespace {

struct AttentionCase {
  std::int64_t batch, seq, heads, head_dim;
};

// Column block `part` of a packed [batch, seq, 3 C] view: q, k or v with the packed strides.
TensorView packed_part(TensorView packed, int part) {
  const std::int64_t c = packed.shape[2] / 3;
  packed.shape[2] = c;
  packed.data =
      static_cast<unsigned char*>(packed.data) + part * c * static_cast<std::int64_t>(dtype_size(packed.dtype));
  return packed;
}

void check_attention(DType t, const AttentionCase& s, std::mt19937_64& rng, std::uint64_t seed) {
  const std::int64_t c = s.heads * s.head_dim, n = s.batch * s.seq;
  const bool accumulate = rng() % 2 == 0;
  const std::string where = std::string(dtype_name(t)) + " batch=" + std::to_string(s.batch) +
                            " seq=" + std::to_string(s.seq) + " heads=" + std::to_string(s.heads) +
                            " head_dim=" + std::to_string(s.head_dim) + (accumulate ? " accumulate" : "") +
                            " seed=" + std::to_string(seed);
  HostArray qkv(t, n * 3 * c), out_ref(t, n * c), lse_ref(DType::f32, s.batch * s.heads * s.seq), dout(t, n * c),
      dqkv_old(t, n * 3 * c);
  fill_random(qkv, rng, -2.0f, 2.0f);
  fill_random(dout, rng);
  fill_random(dqkv_old, rng);
  HostArray dqkv_ref = dqkv_old;
  const TensorView packed_host(qkv.data(), t, {s.batch, s.seq, 3 * c});
  const TensorView dpacked_host(dqkv_ref.data(), t, {s.batch, s.seq, 3 * c});
  {
    ReferenceOnly reference;
    AttentionForwardArgs f;
    f.q = packed_part(packed_host, 0);
    f.k = packed_part(packed_host, 1);
    f.v = packed_part(packed_host, 2);
    f.out = host_view(out_ref, {s.batch, s.seq, c});
    f.lse = host_view(lse_ref, {s.batch, s.heads, s.seq});
    f.heads = static_cast<int>(s.heads);
    attention_forward(f);
    AttentionBackwardArgs b;
    b.q = f.q;
    b.k = f.k;
    b.v = f.v;
    b.out = f.out;
    b.lse = f.lse;
    b.dout = host_view(dout, {s.batch, s.seq, c});
    b.dq = packed_part(dpacked_host, 0);
    b.dk = packed_part(dpacked_host, 1);
    b.dv = packed_part(dpacked_host, 2);
    b.heads = f.heads;
    b.accumulate = accumulate;
    attention_backward(b);
  }
  HostArray out_gpu[kRuns], lse_gpu[kRuns], dqkv_gpu[kRuns];
  for (int run = 0; run < kRuns; ++run) {
    ReferenceOnly cuda_reference(run == kCudaReference);
    DeviceArray d_qkv(qkv), d_out(out_ref.bytes.size(), 0x7f), d_lse(lse_ref.bytes.size(), 0x7f), d_out_ref(out_ref),
        d_lse_ref(lse_ref), d_dout(dout), d_dqkv(dqkv_old);
    TensorView packed = device_view(d_qkv, t, {s.batch, s.seq, 3 * c});
    TensorView dpacked = device_view(d_dqkv, t, {s.batch, s.seq, 3 * c});
    AttentionForwardArgs f;
    f.q = packed_part(packed, 0);
    f.k = packed_part(packed, 1);
    f.v = packed_part(packed, 2);
    f.out = device_view(d_out, t, {s.batch, s.seq, c});
    f.lse = device_view(d_lse, DType::f32, {s.batch, s.heads, s.seq});
    f.heads = static_cast<int>(s.heads);
    attention_forward(f);
    // The backward from the reference's out and lse, as the reference's backward.
    AttentionBackwardArgs b;
    b.q = f.q;
    b.k = f.k;
    b.v = f.v;
    b.out = device_view(d_out_ref, t, {s.batch, s.seq, c});
    b.lse = device_view(d_lse_ref, DType::f32, {s.batch, s.heads, s.seq});
    b.dout = device_view(d_dout, t, {s.batch, s.seq, c});
    b.dq = packed_part(dpacked, 0);
    b.dk = packed_part(dpacked, 1);
    b.dv = packed_part(dpacked, 2);
    b.heads = f.heads;
    b.accumulate = accumulate;
    attention_backward(b);
    out_gpu[run] = d_out.to_host(t);
    lse_gpu[run] = d_lse.to_host(DType::f32);
    dqkv_gpu[run] = d_dqkv.to_host(t);
  }
  // The bounds of error_bounds.hpp, element by element.
  const error_bounds::AttentionShape shape{s.batch, s.seq, s.heads, s.head_dim, 1.0 / std::sqrt(double(s.head_dim))};
  const auto get_from = [&](bool backward) {
    return [&, backward](char which, std::int64_t b, std::int64_t i, std::int64_t col) -> double {
      const std::int64_t row = b * s.seq + i;
      switch (which) {
        case 'q': return qkv.get(row * 3 * c + col);
        case 'k': return qkv.get(row * 3 * c + c + col);
        case 'v': return qkv.get(row * 3 * c + 2 * c + col);
        case 'o': return out_ref.get(row * c + col);
        default: return backward ? dout.get(row * c + col) : 0.0;
      }
    };
  };
  std::vector<double> out_bound(static_cast<std::size_t>(n * c)), lse_bound(static_cast<std::size_t>(lse_ref.size())),
      dqkv_bound(static_cast<std::size_t>(n * 3 * c));
  error_bounds::attention_bounds(
      shape, false, get_from(false), [](std::int64_t, std::int64_t, std::int64_t) { return 0.0; },
      [&](char, std::int64_t b, std::int64_t i, std::int64_t col, double err) {
        const std::int64_t e = (b * s.seq + i) * c + col;
        out_bound[static_cast<std::size_t>(e)] = error_bounds::attention_output(err, out_ref.get(e), t);
      },
      [&](std::int64_t b, std::int64_t h, std::int64_t i, double err) {
        const std::int64_t e = (b * s.heads + h) * s.seq + i;
        lse_bound[static_cast<std::size_t>(e)] = error_bounds::attention_lse(err, lse_ref.get(e));
      });
  error_bounds::attention_bounds(
      shape, true, get_from(true),
      [&](std::int64_t b, std::int64_t h, std::int64_t i) -> double {
        return lse_ref.get((b * s.heads + h) * s.seq + i);
      },
      [&](char which, std::int64_t b, std::int64_t i, std::int64_t col, double err) {
        const std::int64_t part = which == 'q' ? 0 : which == 'k' ? 1 : 2;
        const std::int64_t e = (b * s.seq + i) * 3 * c + part * c + col;
        // With accumulate, the fp32 add of the old value: one more rounding of |old + value|.
        const double old = accumulate ? std::fabs(dqkv_old.get(e)) : 0.0;
        dqkv_bound[static_cast<std::size_t>(e)] =
            error_bounds::attention_gradient_output(err + 2.0 * error_bounds::kU32 * old, dqkv_ref.get(e), t);
      },
      [](std::int64_t, std::int64_t, std::int64_t, double) {});
  compare(where, "out", out_gpu[0], out_ref, [&](std::int64_t i) { return out_bound[static_cast<std::size_t>(i)]; });
  compare(where, "lse", lse_gpu[0], lse_ref, [&](std::int64_t i) { return lse_bound[static_cast<std::size_t>(i)]; });
  compare(where, "dqkv", dqkv_gpu[0], dqkv_ref,
          [&](std::int64_t i) { return dqkv_bound[static_cast<std::size_t>(i)]; });
  expect_same_bits(where, "out", out_gpu[0], out_gpu[1]);
  expect_same_bits(where, "lse", lse_gpu[0], lse_gpu[1]);
  expect_same_bits(where, "dqkv", dqkv_gpu[0], dqkv_gpu[1]);
  expect_cpu_bits(where, "out of attention_fwd_ref_cuda", out_gpu[kCudaReference], out_ref);
  expect_cpu_bits(where, "lse of attention_fwd_ref_cuda", lse_gpu[kCudaReference], lse_ref);
  expect_cpu_bits(where, "dqkv of attention_bwd_ref_cuda", dqkv_gpu[kCudaReference], dqkv_ref);
}

}  // namespace

TEST(CudaGraphOps, AttentionMatchesTheReference) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  // One element; several heads; more keys than a chunk (64) of shared weights; more columns than
  // one pass of the threads holds (512); an odd head_dim.
  const AttentionCase cases[] = {{1, 1, 1, 1},    {2, 5, 3, 4},   {1, 70, 2, 16},
                                 {2, 33, 1, 130}, {1, 9, 1, 600}, {3, 17, 4, 7}};
  for (DType t : kDtypes)
    for (const AttentionCase& s : cases) check_attention(t, s, rng, seed);
}

}  // namespace ampkit::cuda_test
