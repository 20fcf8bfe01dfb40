// What `ampkit bench gemm` and `ampkit bench linear` share (tools layer): dtype / fp16-mode and
// epilogue parsing, the machine's peaks measured in the same run, the peer phases (OpenBLAS in
// its own process, then oneDNN in-process), and one result row format for the table and --json.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/ops/gemm.hpp"
#include "tools/ampkit/bench_peers.hpp"
#include "tools/ampkit/bench_util.hpp"

namespace ampkit::tools::bench {

/// A GEMM operand dtype and, for f16, the fp16 mode.
struct DtypeMode {
  DType dtype = DType::f32;
  Fp16Mode mode = Fp16Mode::exact;
  /// "f32", "bf16", "f16:exact" ...
  std::string name() const;
};

/// "exact" / "flush" / "alt".
const char* fp16_mode_name(Fp16Mode mode);
/// Parses "f32,bf16,f16" (f16 = every mode) or "f16:alt"; throws Error naming `command`.
std::vector<DtypeMode> parse_dtype_modes(const std::string& text, const char* command);

/// "DEFAULT", "GELU_AUX_BIAS", ...
const char* epilogue_name(Epilogue e);
/// Parses a comma list of epilogue names (case-insensitive); throws Error naming `command`.
std::vector<Epilogue> parse_epilogues(const std::string& text, const char* command);

/// The options `bench gemm` and `bench linear` share: thread counts (default 1,2; 1 with --quick),
/// peers (--peers openblas,onednn | none) and how long each case is timed.
struct RunSettings {
  std::vector<int> threads;
  std::vector<std::string> peers;
  MeasureOptions measure;
};
/// Reads them from `opt`; throws Error naming `command` on an unknown peer.
RunSettings parse_run_settings(const Options& opt, bool quick, const char* command);

/// The ceilings of this machine, measured now for each thread count.
struct Peaks {
  std::vector<int> threads;
  std::vector<double> fma_f32, bf16_dot;  // GFLOP/s, parallel to threads (NaN if unavailable)
  /// Measures both loops for each thread count (under a second each).
  static Peaks measure(const std::vector<int>& threads, int reps);
  /// Measures again (after the cases) and keeps the higher figure of each: a ceiling, so a
  /// neighbour's burst of load during one of the two measurements does not lower it.
  void remeasure_keep_max(int reps);
  /// The ceiling a GEMM of `dm` runs against: BF16 dot products for bf16 and f16-alt (operands
  /// rounded to bf16), fp32 FMA otherwise. Sets `name` to the PeakKind's name.
  double for_case(const DtypeMode& dm, int threads, const char** name) const;
};

/// One measured case of ampkit (a gemm call or a Linear pass).
struct BenchRow {
  std::string op = "gemm";   // "gemm" or "linear"
  std::string pass;          // linear: "forward", "backward_dx", "backward_dw"
  std::int64_t batch = 0, in = 0, out = 0;  // linear only
  PeerShape shape;           // the GEMM: m, n, k, op_a, op_b
  DtypeMode dm;
  Epilogue epilogue = Epilogue::DEFAULT;
  int threads = 1;
  double ms = 0.0, gflops = 0.0;
  std::string kernel;
  // Filled by attach_peers:
  double peak = 0.0;
  const char* peak_name = "";
  double openblas_gflops = std::nan(""), onednn_gflops = std::nan("");
  std::string onednn_what;   // which oneDNN matmul it was compared with
};

/// Runs the peer phases for the rows (OpenBLAS child per thread count, then oneDNN), then fills
/// each row's peak and peer figures. `peers` is a subset of {"openblas", "onednn"}. Notes on
/// what ran (or why a peer did not) go to `notes`.
void attach_peers(std::vector<BenchRow>& rows, const Peaks& peaks, const std::vector<std::string>& peers,
                  const MeasureOptions& options, std::vector<std::string>& notes);

/// Prints the rows as a table (with the peaks and notes) or as JSON lines.
void print_rows(const std::vector<BenchRow>& rows, const Peaks& peaks,
                const std::vector<std::string>& notes, bool json, const char* title);

/// 2 m n k / time.
double gemm_gflops(const PeerShape& s, double ms);

}  // namespace ampkit::tools::bench
