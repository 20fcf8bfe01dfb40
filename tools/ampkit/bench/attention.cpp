// `ampkit bench attention` (tools layer, bench/): the causal attention op's speed. Only the GPU
// half exists (bench/cuda/attention_cuda_bench.cpp, --device cuda); the CPU kernels' speed is
// measured where it counts, per node in `ampkit bench train` (docs/ATTENTION.md).
#include "ampkit/core/error.hpp"
#include "tools/ampkit/bench/cuda/cuda_bench.hpp"
#include "tools/ampkit/commands.hpp"

namespace ampkit::tools {

int run_bench_attention(const Args& given) {
  Args args = given;
  if (bench::take_device_option(args) == "cuda") return bench::run_bench_attention_cuda(args);
  throw Error(
      "bench attention: only --device cuda is measured here; the CPU attention kernels' time is per node in "
      "`ampkit bench train`",
      ErrorKind::unsupported);
}

}  // namespace ampkit::tools
