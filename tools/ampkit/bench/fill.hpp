// Input data of the `ampkit bench` subcommands (tools layer, bench/): uniform random values
// rounded once to the operand's dtype. Timing does not depend on them beyond being ordinary
// finite numbers (no NaN, no subnormal storms).
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"

namespace ampkit::tools::bench {

/// n elements of dtype t (f32, bf16 or f16) = uniform values in [-scale, scale) from one
/// mt19937_64 stream seeded with `seed`, in order (the GEMM and Linear benches).
void fill_uniform(void* data, DType t, std::int64_t n, std::uint64_t seed, float scale = 1.0f);

/// n elements of dtype t = offset + scale * u, u uniform in [-1, 1) from a hash of (seed, index):
/// deterministic whatever the thread count, filled by `threads` threads and rounded once by
/// ampkit::convert (the norm bench, whose tensors reach gigabytes).
void fill_hashed(void* data, DType t, std::int64_t n, std::uint64_t seed, float offset, float scale, int threads);

}  // namespace ampkit::tools::bench
