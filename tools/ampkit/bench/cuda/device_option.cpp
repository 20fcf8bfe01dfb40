// --device of `ampkit bench gemm|norm` (tools layer, bench/cuda/): taken off the arguments before
// the CPU bench parses them, so the CPU benches' options stay as they were.
#include "tools/ampkit/bench/cuda/cuda_bench.hpp"

#include <string>

#include "ampkit/device/cuda.hpp"
#include "tools/ampkit/bench/cuda/device_timing.hpp"

namespace ampkit::tools::bench {

std::string take_device_option(Args& args) {
  std::string device = "cpu";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--device") {
      if (i + 1 >= args.size()) cli::usage_fail("--device expects cpu or cuda, but got nothing");
      device = args[i + 1];
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else if (args[i].rfind("--device=", 0) == 0) {
      device = args[i].substr(9);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      continue;
    }
    if (device != "cpu" && device != "cuda") cli::usage_fail("--device expects cpu or cuda, but got '", device, "'");
    break;
  }
  return device;
}

double measure_copy_gbps(std::size_t bytes) {
  void* src = cuda_malloc(bytes);
  void* dst = nullptr;
  try {
    dst = cuda_malloc(bytes);
    cuda_fill_bytes(src, 1, bytes);
    const double ms = device_ms([&] { cuda_copy_on_device_async(dst, src, bytes); }, 5, 50.0);
    cuda_free(dst);
    cuda_free(src);
    return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9;
  } catch (...) {
    cuda_free(dst);
    cuda_free(src);
    throw;
  }
}

}  // namespace ampkit::tools::bench
