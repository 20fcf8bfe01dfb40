// The machine's ceilings, measured in the same run as the benchmark that quotes a fraction of
// them (tools layer, bench/): arithmetic (the loops of peak_loops_avx512bf16.cpp and
// peak_loops_amx.cpp, ISA flags by name; timed on 1..N threads by peak.cpp) for `bench gemm` / `bench linear`, and copy
// bandwidth for `bench norm`.
#pragma once

#include <cstdint>

#include "tools/ampkit/bench/timing.hpp"

namespace ampkit::tools::bench {

/// Which ceiling: fp32 FMA (vfmadd231ps zmm), bf16 dot products (vdpbf16ps zmm) or AMX bf16
/// tile products (tdpbf16ps).
enum class PeakKind { fma_f32, dpbf16, amx_bf16 };

/// Independent accumulator chains per loop iteration: FMA latency 4 x 2 pipes needs >= 8,
/// vdpbf16ps latency up to 6 x 2 pipes >= 12.
constexpr int kPeakChains = 16;

/// kPeakChains vfmadd231ps zmm per iteration (16 x 2 flops each); returns a sum so the work stays.
float peak_loop_fma_f32_avx512(std::int64_t iterations);
/// kPeakChains vdpbf16ps zmm per iteration (32 x 2 flops each).
float peak_loop_dpbf16_avx512bf16(std::int64_t iterations);

/// 4 tdpbf16ps per iteration (16 x 16 outputs x 32 products x 2 flops each); loads the tile
/// configuration itself and releases the tiles at the end.
float peak_loop_amx_bf16(std::int64_t iterations);

/// "fma_f32", "bf16_dot" or "amx_bf16".
const char* peak_name(PeakKind kind);

/// Total GFLOP/s of the `kind` loop with `threads` OpenMP threads each running it (median of
/// `reps` runs of about 40 ms), timed on `clock` as the GEMM cases are (per CPU-second with a
/// CPU clock). NaN when the CPU lacks the instructions (AVX-512 / AVX512_BF16 / AMX-BF16 with
/// the OS's tile-data permission).
double measure_peak_gflops(PeakKind kind, int threads, int reps = 5, BenchClock clock = BenchClock::wall);

/// STREAM-style copy bandwidth in GB/s (1e9 bytes/s) with `threads` OpenMP threads: two float
/// arrays of 256 MiB each (8x the 32 MiB L3), b[i] = a[i] with ordinary stores, counted as read
/// + write bytes (8 per element; the hidden write-allocate read is not counted), the median of
/// `reps` copies after a warm-up. The same byte convention as every `ampkit bench` GB/s figure.
double copy_bandwidth_gbps(int threads, int reps = 9);

}  // namespace ampkit::tools::bench
