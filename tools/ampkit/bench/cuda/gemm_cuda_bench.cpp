// `ampkit bench gemm --device cuda` (tools layer, bench/cuda/): TFLOP/s of ampkit's gemm on GPU 0
// per shape, dtype and epilogue, next to plain cuBLASLt (the DEFAULT epilogue, prepared once) on
// the same shape and dtype, in the same run; the fraction of the tensor-core ceiling (plain
// cuBLASLt bf16 at 8192^3, measured first) and the overhead of each epilogue over the plain
// product. Operands are filled once with small random values on the host.
#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/ops/gemm.hpp"
#include "tools/ampkit/bench/cuda/cuda_bench.hpp"
#include "tools/ampkit/bench/cuda/device_timing.hpp"
#include "tools/ampkit/bench/peers/cublaslt_peer.hpp"
#include "tools/ampkit/cli/options.hpp"
#include "tools/ampkit/common/json_line.hpp"

namespace ampkit::tools::bench {
namespace {

// Device memory freed on every path out.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) : p(cuda_malloc(bytes)) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cuda_free(p); }
};

std::optional<Epilogue> parse_epilogue(const std::string& s) {
  for (Epilogue e : {Epilogue::DEFAULT, Epilogue::BIAS, Epilogue::GELU_BIAS, Epilogue::GELU_AUX_BIAS,
                     Epilogue::DGELU_BGRAD, Epilogue::BGRADB})
    if (s == epilogue_name(e)) return e;
  return std::nullopt;
}

}  // namespace

// Fills device memory with `count` random values of dtype t (f32 and bf16 in [-1, 1], f16 in
// +-[0.5, 1)), written through a host buffer.
void fill_device_random(void* device, DType t, std::int64_t count, std::mt19937& rng) {
  std::vector<unsigned char> host(static_cast<std::size_t>(count) * dtype_size(t));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < count; ++i) {
    const float v = u(rng);
    if (t == DType::f32) {
      std::memcpy(host.data() + i * 4, &v, 4);
    } else {
      std::uint32_t bits;
      std::memcpy(&bits, &v, 4);
      std::uint16_t h =
          t == DType::bf16
              ? static_cast<std::uint16_t>(bits >> 16)
              : static_cast<std::uint16_t>((v < 0.0f ? 0xb800u : 0x3800u) | (bits >> 13 & 0x3ffu));  // +-[0.5, 1)
      std::memcpy(host.data() + i * 2, &h, 2);
    }
  }
  cuda_copy_to_device(device, host.data(), host.size());
}

double measure_bf16_ceiling_tflops(std::int64_t s) {
  DeviceBuffer a(static_cast<std::size_t>(s * s * 2)), b(static_cast<std::size_t>(s * s * 2)),
      d(static_cast<std::size_t>(s * s * 2));
  std::mt19937 rng(1);
  fill_device_random(a.p, DType::bf16, s * s, rng);
  fill_device_random(b.p, DType::bf16, s * s, rng);
  auto peer = CublasLtPeer::make(Op::T, Op::N, s, s, s, DType::bf16, a.p, b.p, d.p);
  const double ms = device_ms([&] { peer->run(); });
  return 2.0 * static_cast<double>(s) * static_cast<double>(s) * static_cast<double>(s) / (ms * 1e-3) / 1e12;
}

int run_bench_gemm_cuda(const Args& args) {
  std::optional<std::string> shapes, dtypes, epilogues, gelu;
  bool json = false, quick = false;
  cli::OptionParser parser("bench gemm --device cuda",
                           "TFLOP/s of ampkit::gemm on GPU 0 vs plain cuBLASLt and the measured tensor-core ceiling.");
  parser
      .text("--shapes", "MxNxK,...", &shapes, "default 8192x8192x8192,4096x16384x1024,1024x16384x4096,12288x8192x3072")
      .text("--dtype", "LIST", &dtypes, "bf16,f16,f32 (f16: the exact mode, fp16 tensor cores); default bf16,f16")
      .text("--epilogue", "LIST", &epilogues, "default DEFAULT,BIAS,GELU_AUX_BIAS,DGELU_BGRAD,BGRADB")
      .choice("--gelu", {"tanh", "erf"}, &gelu, "GELU variant (default tanh)")
      .flag("--json", &json, "one JSON object per line")
      .flag("--quick", &quick, "two small shapes");
  parser.footer(
      "D (m x n) = epilogue(op(A) op(B)), op = TN (the Linear forward); A, B, D, bias, aux in the dtype.\n"
      "TFLOP/s = 2mnk / s. 'vs plain' = ampkit time / plain cuBLASLt time - 1 (same shape and dtype).");
  if (!parser.parse(args)) return 0;
  if (cuda_device_count() == 0)
    throw Error("bench gemm --device cuda: " + cuda_unavailable_reason(), ErrorKind::unsupported);

  std::vector<std::array<std::int64_t, 3>> shape_list;
  for (const std::string& s :
       cli::split_list(shapes.value_or(quick ? "2048x2048x2048,1024x1024x1024"
                                             : "8192x8192x8192,4096x16384x1024,1024x16384x4096,12288x8192x3072"))) {
    std::array<std::int64_t, 3> t{};
    const auto parts = cli::split_list(s, 'x');
    if (parts.size() != 3) cli::usage_fail("--shapes expects MxNxK items, but got '", s, "'");
    for (int i = 0; i < 3; ++i)
      t[static_cast<std::size_t>(i)] = cli::parse_int(parts[static_cast<std::size_t>(i)], "--shapes", 1, 1 << 16);
    shape_list.push_back(t);
  }
  std::vector<DType> dtype_list;
  for (const std::string& s : cli::split_list(dtypes.value_or("bf16,f16"))) {
    if (s == "bf16")
      dtype_list.push_back(DType::bf16);
    else if (s == "f16")
      dtype_list.push_back(DType::f16);
    else if (s == "f32")
      dtype_list.push_back(DType::f32);
    else
      cli::usage_fail("--dtype expects bf16, f16 or f32, but got '", s, "'");
  }
  std::vector<Epilogue> epilogue_list;
  for (const std::string& s : cli::split_list(epilogues.value_or("DEFAULT,BIAS,GELU_AUX_BIAS,DGELU_BGRAD,BGRADB"))) {
    const auto e = parse_epilogue(s);
    if (!e)
      cli::usage_fail("--epilogue expects DEFAULT, BIAS, GELU_BIAS, GELU_AUX_BIAS, DGELU_BGRAD or BGRADB, but got '", s,
                      "'");
    epilogue_list.push_back(*e);
  }
  const GeluVariant variant = gelu.value_or("tanh") == "erf" ? GeluVariant::erf : GeluVariant::tanh;

  // The ceilings of this run: copy bandwidth and plain cuBLASLt bf16 at 8192^3.
  const double copy_gbps = measure_copy_gbps(std::size_t{1} << 30);
  const double ceiling_tflops = measure_bf16_ceiling_tflops(quick ? 4096 : 8192);
  const std::string device = cuda_device_description(0);
  if (json) {
    std::printf("%s\n", JsonLine()
                            .add("bench", "gemm")
                            .add("device", device)
                            .add("copy_gbps", copy_gbps)
                            .add("tensor_core_ceiling_tflops", ceiling_tflops)
                            .str()
                            .c_str());
  } else {
    std::printf("%s\ncopy bandwidth %.0f GB/s; tensor-core ceiling (plain cuBLASLt bf16 %s^3) %.1f TFLOP/s\n\n",
                device.c_str(), copy_gbps, quick ? "4096" : "8192", ceiling_tflops);
    std::printf("%-22s %-5s %-14s %10s %9s %8s %12s %9s  %s\n", "shape (m x n x k)", "dtype", "epilogue", "ampkit ms",
                "TFLOP/s", "of ceil", "cuBLASLt ms", "vs plain", "kernel");
  }
  std::mt19937 rng(7);
  for (const auto& s : shape_list) {
    const std::int64_t m = s[0], n = s[1], k = s[2];
    for (DType t : dtype_list) {
      const std::size_t es = dtype_size(t);
      DeviceBuffer a(static_cast<std::size_t>(m * k) * es), b(static_cast<std::size_t>(k * n) * es),
          d(static_cast<std::size_t>(m * n) * es), aux(static_cast<std::size_t>(m * n) * es),
          bias(static_cast<std::size_t>(m > n ? m : n) * es), bias_grad(static_cast<std::size_t>(m > n ? m : n) * es);
      fill_device_random(a.p, t, m * k, rng);
      fill_device_random(b.p, t, k * n, rng);
      fill_device_random(aux.p, t, m * n, rng);
      fill_device_random(bias.p, t, m > n ? m : n, rng);
      auto peer = CublasLtPeer::make(Op::T, Op::N, m, n, k, t, a.p, b.p, d.p);
      const double plain_ms = device_ms([&] { peer->run(); });
      for (Epilogue e : epilogue_list) {
        GemmArgs g;
        g.op_a = Op::T;
        g.op_b = Op::N;
        g.m = m;
        g.n = n;
        g.k = k;
        g.a = a.p;
        g.b = b.p;
        g.d = d.p;
        g.a_dtype = g.b_dtype = g.c_dtype = g.d_dtype = t;
        g.lda = k;
        g.ldb = k;
        g.ldd = m;
        g.device = Device::cuda;
        g.epilogue.kind = e;
        g.epilogue.gelu = variant;
        g.epilogue.bias_dtype = g.epilogue.aux_dtype = t;
        if (e == Epilogue::BIAS || e == Epilogue::GELU_BIAS || e == Epilogue::GELU_AUX_BIAS) g.epilogue.bias = bias.p;
        if (e == Epilogue::GELU_AUX_BIAS || e == Epilogue::DGELU_BGRAD) {
          g.epilogue.aux = aux.p;
          g.epilogue.aux_ld = m;
        }
        if (e == Epilogue::DGELU_BGRAD || e == Epilogue::BGRADB) g.epilogue.bias_grad = bias_grad.p;
        const std::string kernel = gemm_kernel_name(g);
        const double ms = device_ms([&] { gemm(g); });
        const double tflops =
            2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / (ms * 1e-3) / 1e12;
        const double over = ms / plain_ms - 1.0;
        if (json) {
          std::printf("%s\n", JsonLine()
                                  .add("bench", "gemm")
                                  .add("m", m)
                                  .add("n", n)
                                  .add("k", k)
                                  .add("dtype", dtype_name(t))
                                  .add("epilogue", epilogue_name(e))
                                  .add("gelu", variant == GeluVariant::erf ? "erf" : "tanh")
                                  .add("kernel", kernel)
                                  .add("ms", ms)
                                  .add("tflops", tflops)
                                  .add("of_ceiling", tflops / ceiling_tflops)
                                  .add("cublaslt_plain_ms", plain_ms)
                                  .add("over_plain", over)
                                  .str()
                                  .c_str());
        } else {
          char shape[64];
          std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", static_cast<long long>(m), static_cast<long long>(n),
                        static_cast<long long>(k));
          std::printf("%-22s %-5s %-14s %10.3f %9.1f %8.3f %12.3f %+8.1f%%  %s\n", shape,
                      std::string(dtype_name(t)).c_str(), epilogue_name(e), ms, tflops, tflops / ceiling_tflops,
                      plain_ms, 100.0 * over, kernel.c_str());
        }
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace ampkit::tools::bench
