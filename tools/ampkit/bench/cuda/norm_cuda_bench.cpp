// `ampkit bench norm --device cuda` (tools layer, bench/cuda/): GB/s of ampkit's LayerNorm and
// RMSNorm on GPU 0, forward and backward, for every dtype mix, as a fraction of the
// device-to-device copy bandwidth measured in the same run. Bytes counted: x read and y written
// (forward; plus mean/rstd and the parameters), dy and x read and dx written (backward; plus the
// statistics, gamma, dgamma and dbeta).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/ops/norm.hpp"
#include "tools/ampkit/bench/cuda/cuda_bench.hpp"
#include "tools/ampkit/bench/cuda/device_timing.hpp"
#include "tools/ampkit/cli/options.hpp"
#include "tools/ampkit/common/json_line.hpp"

namespace ampkit::tools::bench {
namespace {

struct Mix {
  const char* name;
  DType x, p;
};

// Device memory freed on every path out, filled with a byte pattern (0x3c: finite in every dtype).
struct Buffer {
  void* p = nullptr;
  explicit Buffer(std::size_t bytes) : p(cuda_malloc(bytes)) { cuda_fill_bytes(p, 0x3c, bytes); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { cuda_free(p); }
};

}  // namespace

int run_bench_norm_cuda(const Args& args) {
  std::optional<std::string> shapes, mixes, kinds;
  bool json = false, quick = false;
  cli::OptionParser parser("bench norm --device cuda",
                           "GB/s of ampkit's LayerNorm/RMSNorm on GPU 0 vs the copy bandwidth.");
  parser.text("--shapes", "ROWSxN,...", &shapes, "default 16384x4096,8192x8192,32768x1024,4096x12288")
      .text("--mix", "LIST", &mixes, "f32,bf16,f16,bf16/f32,f16/f32 (x dtype / parameter dtype); default all")
      .text("--kind", "LIST", &kinds, "layer,rms (default both)")
      .flag("--json", &json, "one JSON object per line")
      .flag("--quick", &quick, "one shape");
  if (!parser.parse(args)) return 0;
  if (cuda_device_count() == 0)
    throw Error("bench norm --device cuda: " + cuda_unavailable_reason(), ErrorKind::unsupported);
  std::vector<std::pair<std::int64_t, std::int64_t>> shape_list;
  for (const std::string& s :
       cli::split_list(shapes.value_or(quick ? "16384x4096" : "16384x4096,8192x8192,32768x1024,4096x12288"))) {
    const auto parts = cli::split_list(s, 'x');
    if (parts.size() != 2) cli::usage_fail("--shapes expects ROWSxN items, but got '", s, "'");
    shape_list.emplace_back(cli::parse_int(parts[0], "--shapes", 1, 1 << 24),
                            cli::parse_int(parts[1], "--shapes", 1, 1 << 20));
  }
  const Mix all[] = {{"f32", DType::f32, DType::f32},
                     {"bf16", DType::bf16, DType::bf16},
                     {"f16", DType::f16, DType::f16},
                     {"bf16/f32", DType::bf16, DType::f32},
                     {"f16/f32", DType::f16, DType::f32}};
  std::vector<Mix> mix_list;
  for (const std::string& s : cli::split_list(mixes.value_or("f32,bf16,f16,bf16/f32,f16/f32"))) {
    bool found = false;
    for (const Mix& m : all)
      if (s == m.name) mix_list.push_back(m), found = true;
    if (!found) cli::usage_fail("--mix expects f32, bf16, f16, bf16/f32 or f16/f32, but got '", s, "'");
  }
  std::vector<NormKind> kind_list;
  for (const std::string& s : cli::split_list(kinds.value_or("layer,rms"))) {
    if (s == "layer")
      kind_list.push_back(NormKind::layer);
    else if (s == "rms")
      kind_list.push_back(NormKind::rms);
    else
      cli::usage_fail("--kind expects layer or rms, but got '", s, "'");
  }

  const double copy_gbps = measure_copy_gbps(std::size_t{1} << 30);
  const std::string device = cuda_device_description(0);
  if (json)
    std::printf("%s\n",
                JsonLine().add("bench", "norm").add("device", device).add("copy_gbps", copy_gbps).str().c_str());
  else
    std::printf("%s\ncopy bandwidth %.0f GB/s (device to device, read + write)\n\n%-6s %-9s %-14s %-4s %10s %9s %8s\n",
                device.c_str(), copy_gbps, "kind", "mix", "rows x n", "pass", "ms", "GB/s", "of copy");
  for (const auto& [rows, n] : shape_list) {
    for (const Mix& mix : mix_list) {
      const std::size_t xs = dtype_size(mix.x), ps = dtype_size(mix.p);
      const std::size_t act = static_cast<std::size_t>(rows * n) * xs, par = static_cast<std::size_t>(n) * ps,
                        stat = static_cast<std::size_t>(rows) * 4;
      Buffer x(act), y(act), dy(act), dx(act), gamma(par), beta(par), dgamma(par), dbeta(par), mean(stat), rstd(stat);
      for (NormKind kind : kind_list) {
        const bool rms = kind == NormKind::rms;
        NormForwardArgs f;
        f.x = TensorView(x.p, mix.x, {rows, n}, Device::cuda);
        f.gamma = TensorView(gamma.p, mix.p, {n}, Device::cuda);
        if (!rms) f.beta = TensorView(beta.p, mix.p, {n}, Device::cuda);
        f.y = TensorView(y.p, mix.x, {rows, n}, Device::cuda);
        if (!rms) f.mean = TensorView(mean.p, DType::f32, {rows}, Device::cuda);
        f.rstd = TensorView(rstd.p, DType::f32, {rows}, Device::cuda);
        NormBackwardArgs b;
        b.dy = TensorView(dy.p, mix.x, {rows, n}, Device::cuda);
        b.x = f.x;
        b.mean = f.mean;
        b.rstd = f.rstd;
        b.gamma = f.gamma;
        b.dx = TensorView(dx.p, mix.x, {rows, n}, Device::cuda);
        b.dgamma = TensorView(dgamma.p, mix.p, {n}, Device::cuda);
        if (!rms) b.dbeta = TensorView(dbeta.p, mix.p, {n}, Device::cuda);
        const double params = rms ? 1.0 : 2.0;
        const double fwd_bytes = 2.0 * static_cast<double>(act) + params * static_cast<double>(par) +
                                 (rms ? 1.0 : 2.0) * static_cast<double>(stat);
        const double bwd_bytes = 3.0 * static_cast<double>(act) + (1.0 + params) * static_cast<double>(par) +
                                 (rms ? 1.0 : 2.0) * static_cast<double>(stat);
        const double fwd_ms = device_ms([&] { rms ? rms_norm_forward(f) : layer_norm_forward(f); });
        const double bwd_ms = device_ms([&] { rms ? rms_norm_backward(b) : layer_norm_backward(b); });
        for (int pass = 0; pass < 2; ++pass) {
          const double ms = pass == 0 ? fwd_ms : bwd_ms, bytes = pass == 0 ? fwd_bytes : bwd_bytes;
          const double gbps = bytes / (ms * 1e-3) / 1e9;
          if (json) {
            std::printf("%s\n", JsonLine()
                                    .add("bench", "norm")
                                    .add("kind", rms ? "rms" : "layer")
                                    .add("mix", mix.name)
                                    .add("rows", rows)
                                    .add("n", n)
                                    .add("pass", pass == 0 ? "fwd" : "bwd")
                                    .add("ms", ms)
                                    .add("gbps", gbps)
                                    .add("of_copy", gbps / copy_gbps)
                                    .str()
                                    .c_str());
          } else {
            char shape[48];
            std::snprintf(shape, sizeof shape, "%lldx%lld", static_cast<long long>(rows), static_cast<long long>(n));
            std::printf("%-6s %-9s %-14s %-4s %10.4f %9.0f %8.3f\n", rms ? "rms" : "layer", mix.name, shape,
                        pass == 0 ? "fwd" : "bwd", ms, gbps, gbps / copy_gbps);
          }
        }
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace ampkit::tools::bench
