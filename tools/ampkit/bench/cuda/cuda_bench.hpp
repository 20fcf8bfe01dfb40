// The CUDA halves of `ampkit bench gemm` and `ampkit bench norm` (tools layer, bench/cuda/):
// chosen by --device cuda (the CPU benches hand over the remaining arguments). In a build without
// the CUDA backend they report that (ampkit::Error, exit 1).
#pragma once

#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools::bench {

int run_bench_gemm_cuda(const Args& args);  // gemm_cuda_bench.cpp
int run_bench_norm_cuda(const Args& args);  // norm_cuda_bench.cpp

/// Removes "--device X" / "--device=X" from args and returns X ("cpu" when absent). Throws
/// cli::UsageError for a value other than cpu or cuda.
std::string take_device_option(Args& args);

}  // namespace ampkit::tools::bench
