// The results of `ampkit bench gemm` and `bench linear` (tools layer, bench/): one row per
// measured case, the machine's peaks measured in the same run, and the two output forms (a
// table with the peaks and notes, or JSON lines with fixed keys).
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/ops/gemm.hpp"
#include "tools/ampkit/bench/gemm_case.hpp"
#include "tools/ampkit/bench/peers/peer_shape.hpp"

namespace ampkit::tools::bench {

/// The ceilings of this machine, measured now for each thread count.
struct Peaks {
  std::vector<int> threads;
  std::vector<double> fma_f32, bf16_dot, amx_bf16;  // GFLOP/s, parallel to threads (NaN if unavailable)
  /// Measures the loops for each thread count (under a second each).
  BenchClock clock = BenchClock::wall;  // the clock the cases are timed on
  static Peaks measure(const std::vector<int>& threads, int reps, BenchClock clock);
  /// Measures again (after the cases) and keeps the higher figure of each: a ceiling, so a
  /// neighbour's burst of load during one of the two measurements does not lower it.
  void remeasure_keep_max(int reps);
  /// The ceiling a GEMM of `dm` on `kernel` runs against: AMX tile products for an AMX kernel,
  /// BF16 dot products for other bf16 and f16-alt (operands rounded to bf16), fp32 FMA otherwise.
  /// Sets `name` to the PeakKind's name.
  double for_case(const DtypeMode& dm, const std::string& kernel, int threads, const char** name) const;
};

/// One measured case of ampkit (a gemm call or a Linear pass).
struct BenchRow {
  std::string op = "gemm";                  // "gemm" or "linear"
  std::string pass;                         // linear: "forward", "backward_dx", "backward_dw"
  std::int64_t batch = 0, in = 0, out = 0;  // linear only
  PeerShape shape;                          // the GEMM: m, n, k, op_a, op_b
  DtypeMode dm;
  Epilogue epilogue = Epilogue::DEFAULT;
  int threads = 1;
  double ms = 0.0, gflops = 0.0;
  std::string kernel;
  // Memory-bound cases (gemm with min(m, n) <= 16): the bytes a call must move (operands read
  // once, outputs written once), the copy bandwidth at that footprint and the read bandwidth of
  // the bytes it reads, same threads, same run (copy_ceiling.hpp); 0 and NaN for other rows.
  double bytes = 0.0, copy_gbps = std::nan(""), read_gbps = std::nan("");
  // Filled by attach_peers (gemm_peer_phases.hpp):
  double peak = 0.0;
  const char* peak_name = "";
  double openblas_gflops = std::nan(""), onednn_gflops = std::nan("");
  std::string onednn_what;  // which oneDNN matmul it was compared with
  double torch_gflops = std::nan("");
  std::string torch_what;  // "torch <version> <dtype> <epilogue>"
};

/// Prints the rows as JSON lines (one object per row, stdout).
void print_json_rows(const std::vector<BenchRow>& rows);
/// Prints the rows as a table headed by `title`, the machine, the peaks and the notes.
void print_table(const std::vector<BenchRow>& rows, const Peaks& peaks, const std::vector<std::string>& notes,
                 const char* title);

}  // namespace ampkit::tools::bench
