// What `ampkit bench gemm` and `ampkit bench linear` share in their command lines (tools layer,
// bench/): dtype / fp16-mode and epilogue lists, "AxBxC" shape lists, peers and timing settings,
// the operands each epilogue reads or writes, and 2mnk GFLOP/s.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/ops/gemm.hpp"
#include "tools/ampkit/bench/options.hpp"
#include "tools/ampkit/bench/peers/peer_shape.hpp"
#include "tools/ampkit/bench/timing.hpp"

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
/// Parses "f32,bf16,f16" (f16 = every mode) or "f16:alt"; throws cli::UsageError.
std::vector<DtypeMode> parse_dtype_modes(const std::string& text);

/// Parses a comma list of epilogue names (case-insensitive); throws cli::UsageError.
std::vector<Epilogue> parse_epilogues(const std::string& text);
/// Which operands an epilogue touches besides A, B, D.
bool epilogue_reads_bias(Epilogue e);
bool epilogue_writes_bias_grad(Epilogue e);
bool epilogue_uses_aux(Epilogue e);
/// The backward forms (DGELU, DRELU and their BGRAD forms): aux is an input of pre-activations.
bool epilogue_reads_aux(Epilogue e);

/// Parses "4096x1024x768,1x4096x4096" into triples, each dim in [1, 2^20]; `form` names the
/// expected item ("MxNxK"). Throws cli::UsageError.
std::vector<std::array<std::int64_t, 3>> parse_triples(const std::string& text, const char* form);

/// The options `bench gemm` and `bench linear` share: thread counts (default 1,2; 1 with --quick),
/// peers (--peers openblas,onednn | none) and how long each case is timed.
struct RunSettings {
  std::vector<int> threads;
  std::vector<std::string> peers;
  MeasureOptions measure;
};
/// From the common options and --peers; throws cli::UsageError on an unknown peer.
RunSettings make_run_settings(const CommonOptions& common, const std::optional<std::string>& peers);

/// 2 m n k / time.
double gemm_gflops(const PeerShape& s, double ms);

}  // namespace ampkit::tools::bench
