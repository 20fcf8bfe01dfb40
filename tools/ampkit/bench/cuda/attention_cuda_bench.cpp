// `ampkit bench attention --device cuda` (tools layer, bench/cuda/): TFLOP/s of ampkit's causal
// attention forward and backward on GPU 0 per context length, as a fraction of the tensor-core
// ceiling measured first in the same run (plain cuBLASLt bf16 GEMM, as `ampkit bench gemm
// --device cuda`), the kernel each call runs, and the plain kernel (attention_*_cuda) beside it
// up to --plain-max: the same call on views one element off 16-byte alignment, which the flash
// kernels decline. FLOPs counted (causal): forward 4 B H T^2 d / 2, backward 2.5 times that.
// q, k, v are column slices of one packed [B, T, 3 H d] buffer, as the training graph passes them.
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/ops/attention.hpp"
#include "tools/ampkit/bench/cuda/cuda_bench.hpp"
#include "tools/ampkit/bench/cuda/device_timing.hpp"
#include "tools/ampkit/cli/options.hpp"
#include "tools/ampkit/common/json_line.hpp"

namespace ampkit::tools::bench {
namespace {

struct Buffer {
  void* p = nullptr;
  explicit Buffer(std::size_t bytes) : p(cuda_malloc(bytes)) { cuda_fill_bytes(p, 0, bytes); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { cuda_free(p); }
};

// The forward and backward args over packed qkv / dqkv, `shift` elements off the buffers' start.
struct Calls {
  AttentionForwardArgs f;
  AttentionBackwardArgs b;
};
Calls make_calls(DType t, std::int64_t batch, std::int64_t seq, std::int64_t heads, std::int64_t d, void* qkv,
                 void* dqkv, void* out, void* dout, void* lse, std::int64_t shift) {
  const std::int64_t c = heads * d;
  const auto at = [&](void* base, std::int64_t off) {
    return static_cast<unsigned char*>(base) + (off + shift) * static_cast<std::int64_t>(dtype_size(t));
  };
  const auto part = [&](void* base, int i) {
    TensorView v(at(base, i * c), t, {batch, seq, c}, Device::cuda);
    v.strides[0] = seq * 3 * c;
    v.strides[1] = 3 * c;
    return v;
  };
  Calls k;
  k.f.q = part(qkv, 0);
  k.f.k = part(qkv, 1);
  k.f.v = part(qkv, 2);
  k.f.out = TensorView(at(out, 0), t, {batch, seq, c}, Device::cuda);
  k.f.lse = TensorView(lse, DType::f32, {batch, heads, seq}, Device::cuda);
  k.f.heads = static_cast<int>(heads);
  k.b.q = k.f.q;
  k.b.k = k.f.k;
  k.b.v = k.f.v;
  k.b.out = k.f.out;
  k.b.lse = k.f.lse;
  k.b.dout = TensorView(at(dout, 0), t, {batch, seq, c}, Device::cuda);
  k.b.dq = part(dqkv, 0);
  k.b.dk = part(dqkv, 1);
  k.b.dv = part(dqkv, 2);
  k.b.heads = k.f.heads;
  return k;
}

}  // namespace

int run_bench_attention_cuda(const Args& args) {
  std::optional<std::string> seqs, dtypes;
  std::optional<std::int64_t> tokens_opt, heads_opt, head_dim_opt, plain_max_opt;
  bool json = false, quick = false;
  cli::OptionParser parser("bench attention --device cuda",
                           "TFLOP/s of ampkit's causal attention on GPU 0 vs the measured tensor-core ceiling.");
  parser.text("--seq", "LIST", &seqs, "context lengths T (default 256,1024,2048,4096)")
      .integer("--tokens", "N", 1, 1 << 24, &tokens_opt,
               "batch * T per call (batch = N / T, at least 1; default 16384)")
      .integer("--heads", "N", 1, 1024, &heads_opt, "heads (default 12)")
      .integer("--head-dim", "N", 1, 1024, &head_dim_opt, "head dim d (default 64)")
      .integer("--plain-max", "T", 0, 1 << 20, &plain_max_opt, "time the plain kernel up to this T (default 1024)")
      .text("--dtype", "LIST", &dtypes, "bf16,f16 (default bf16)")
      .flag("--json", &json, "one JSON object per line")
      .flag("--quick", &quick, "T = 1024 only, a 4096^3 ceiling");
  if (!parser.parse(args)) return 0;
  const std::int64_t tokens = tokens_opt.value_or(16384), heads = heads_opt.value_or(12),
                     head_dim = head_dim_opt.value_or(64), plain_max = plain_max_opt.value_or(1024);
  if (cuda_device_count() == 0)
    throw Error("bench attention --device cuda: " + cuda_unavailable_reason(), ErrorKind::unsupported);
  std::vector<std::int64_t> seq_list;
  for (const std::string& s : cli::split_list(seqs.value_or(quick ? "1024" : "256,1024,2048,4096")))
    seq_list.push_back(cli::parse_int(s, "--seq", 1, 1 << 20));
  std::vector<DType> dtype_list;
  for (const std::string& s : cli::split_list(dtypes.value_or("bf16"))) {
    if (s == "bf16")
      dtype_list.push_back(DType::bf16);
    else if (s == "f16")
      dtype_list.push_back(DType::f16);
    else
      cli::usage_fail("--dtype expects bf16 or f16, but got '", s, "'");
  }
  const double ceiling = measure_bf16_ceiling_tflops(quick ? 4096 : 8192);
  const std::string device = cuda_device_description(0);
  if (json)
    std::printf("%s\n", JsonLine()
                            .add("bench", "attention")
                            .add("device", device)
                            .add("tensor_core_ceiling_tflops", ceiling)
                            .str()
                            .c_str());
  else
    std::printf(
        "%s\ntensor-core ceiling (plain cuBLASLt bf16 %s^3) %.1f TFLOP/s\n\n%-5s %-6s %-4s %4s %-4s %10s %9s "
        "%8s  %s\n",
        device.c_str(), quick ? "4096" : "8192", ceiling, "dtype", "T", "B", "H", "pass", "ms", "TFLOP/s", "of ceil",
        "kernel");
  std::mt19937 rng(11);
  for (DType t : dtype_list)
    for (std::int64_t seq : seq_list) {
      const std::int64_t batch = tokens / seq > 0 ? tokens / seq : 1, c = heads * head_dim, n = batch * seq * c;
      const std::size_t es = dtype_size(t);
      // One element more than needed, for the plain kernel's misaligned views.
      Buffer qkv((3 * n + 1) * es), dqkv((3 * n + 1) * es), out((n + 1) * es), dout((n + 1) * es),
          lse(static_cast<std::size_t>(batch * heads * seq) * 4);
      fill_device_random(qkv.p, t, 3 * n + 1, rng);
      fill_device_random(dout.p, t, n + 1, rng);
      const double fwd_flops = 4.0 * static_cast<double>(batch * heads) * static_cast<double>(seq) *
                               static_cast<double>(seq) * static_cast<double>(head_dim) / 2.0;
      for (int variant = 0; variant < 2; ++variant) {
        if (variant == 1 && seq > plain_max) break;
        const Calls k = make_calls(t, batch, seq, heads, head_dim, qkv.p, dqkv.p, out.p, dout.p, lse.p, variant);
        attention_forward(k.f);  // out and lse for the backward
        const std::string fk = attention_kernel_name(k.f), bk = attention_kernel_name(k.b);
        const int samples = variant == 1 ? 3 : 5;
        const double fwd_ms = device_ms([&] { attention_forward(k.f); }, samples);
        const double bwd_ms = device_ms([&] { attention_backward(k.b); }, samples);
        for (int pass = 0; pass < 2; ++pass) {
          const double ms = pass == 0 ? fwd_ms : bwd_ms, flops = pass == 0 ? fwd_flops : 2.5 * fwd_flops;
          const double tflops = flops / (ms * 1e-3) / 1e12;
          const std::string& kernel = pass == 0 ? fk : bk;
          if (json)
            std::printf("%s\n", JsonLine()
                                    .add("bench", "attention")
                                    .add("dtype", dtype_name(t))
                                    .add("seq", seq)
                                    .add("batch", batch)
                                    .add("heads", heads)
                                    .add("head_dim", head_dim)
                                    .add("pass", pass == 0 ? "fwd" : "bwd")
                                    .add("kernel", kernel)
                                    .add("ms", ms)
                                    .add("tflops", tflops)
                                    .add("of_ceiling", tflops / ceiling)
                                    .str()
                                    .c_str());
          else
            std::printf("%-5s %-6lld %-4lld %4lld %-4s %10.3f %9.1f %8.3f  %s\n", std::string(dtype_name(t)).c_str(),
                        static_cast<long long>(seq), static_cast<long long>(batch), static_cast<long long>(heads),
                        pass == 0 ? "fwd" : "bwd", ms, tflops, tflops / ceiling, kernel.c_str());
        }
        std::fflush(stdout);
      }
    }
  return 0;
}

}  // namespace ampkit::tools::bench
