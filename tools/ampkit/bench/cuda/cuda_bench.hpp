// The CUDA halves of `ampkit bench gemm` and `ampkit bench norm`, and `ampkit bench attention` (tools layer,
// bench/cuda/): chosen by --device cuda (the CPU benches hand over the remaining arguments). In a build without the
// CUDA backend they report that (ampkit::Error, exit 1).
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "ampkit/core/dtype.hpp"
#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools::bench {

int run_bench_gemm_cuda(const Args& args);       // gemm_cuda_bench.cpp
int run_bench_norm_cuda(const Args& args);       // norm_cuda_bench.cpp
int run_bench_attention_cuda(const Args& args);  // attention_cuda_bench.cpp

/// The tensor-core ceiling of this run: plain cuBLASLt bf16 at s^3 on GPU 0, in TFLOP/s
/// (gemm_cuda_bench.cpp; the figure `ampkit bench gemm --device cuda` prints).
double measure_bf16_ceiling_tflops(std::int64_t s);
/// Fills device memory with `count` random values of dtype t (f32 and bf16 in [-1, 1], f16 in
/// +-[0.5, 1)), written through a host buffer (gemm_cuda_bench.cpp).
void fill_device_random(void* device, DType t, std::int64_t count, std::mt19937& rng);

/// Removes "--device X" / "--device=X" from args and returns X ("cpu" when absent). Throws
/// cli::UsageError for a value other than cpu or cuda.
std::string take_device_option(Args& args);

}  // namespace ampkit::tools::bench
