// The copy ceiling of a bandwidth-bound case (tools layer, bench/): the copy bandwidth measured at
// the same footprint as the case, so that a case whose tensors stay in L2/L3 between calls is
// compared with a copy that stays there too, and a DRAM-sized case with a DRAM-sized copy.
// Used by `ampkit bench norm` and `bench gemm`; conventions in docs/PERFORMANCE.md ("Method",
// "Ceilings"). `bench gemm` also takes the read-only ceiling: a GEMV only reads its operand, and a
// core streams reads at another rate than it copies.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "tools/ampkit/bench/timing.hpp"
#include "tools/ampkit/common/memory.hpp"

namespace ampkit::tools::bench {

/// Copy bandwidth at a given footprint (read + write bytes): b[i] = a[i] over two arrays of
/// footprint/2 bytes each, in 64 KiB memcpy blocks (ordinary stores) split statically over the
/// threads (fewer threads when there are fewer blocks; one block runs on the calling thread, no
/// OpenMP region), looped and timed like the cases (`measure`), GB/s = footprint / median time,
/// 1 GB = 1e9 B. Footprints above dram_footprint() are measured at dram_footprint(): past
/// 8x the L3 every footprint is the same DRAM regime. Results are memoized per (footprint,
/// threads). The arrays are allocated once, 2 MiB aligned with huge-page advice, pre-touched.
class CopyCeiling {
 public:
  /// Throws Error (out_of_memory) when the arrays cannot be allocated.
  CopyCeiling(int max_threads, MeasureOptions options);

  /// max(512 MiB, 8 x L3): the footprint of the DRAM class.
  static std::int64_t dram_footprint();
  /// L2 / 2 per thread: the footprint of the in-cache class (each thread copies within its L2).
  static std::int64_t in_cache_footprint(int threads);

  /// GB/s of a copy of `footprint_bytes` (> 0) read + write bytes with `threads` threads.
  double gbps(std::int64_t footprint_bytes, int threads);
  /// The footprint actually measured for `footprint_bytes` (capped at dram_footprint()).
  static std::int64_t measured_footprint(std::int64_t footprint_bytes);
  /// Measures again, bypassing the memo (the drift check at the end of a run).
  double remeasure(std::int64_t footprint_bytes, int threads);

  /// GB/s of reading `footprint_bytes` (> 0) once: a sum over one array in 64 KiB blocks split
  /// statically over the threads, as the copy; footprints above dram_footprint() / 2 are
  /// measured at dram_footprint() / 2 (the DRAM class). Memoized per (footprint, threads).
  double read_gbps(std::int64_t footprint_bytes, int threads);
  /// The footprint actually measured by read_gbps for `footprint_bytes`.
  static std::int64_t measured_read_footprint(std::int64_t footprint_bytes);

 private:
  double measure_gbps(std::int64_t footprint_bytes, int threads);
  double measure_read_gbps(std::int64_t footprint_bytes, int threads);

  MeasureOptions options_;
  AlignedBuffer src_, dst_;
  std::map<std::pair<std::int64_t, int>, double> memo_, read_memo_;
};

}  // namespace ampkit::tools::bench
