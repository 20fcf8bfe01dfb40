// The cases of `ampkit bench norm` (tools layer, bench/): op, pass, shape (normalized over the
// last dim) and dtype mix, the bytes one call must move, and one measured row as printed by
// norm_report.hpp. Byte conventions: docs/PERFORMANCE.md ("Bytes counted").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "tools/ampkit/bench/timing.hpp"

namespace ampkit::tools::bench {

enum class NormOp { layer_norm, rms_norm };
enum class NormPass { forward, backward };

const char* norm_op_name(NormOp op);
const char* norm_pass_name(NormPass p);

/// The most elements one --shapes item may have (2^36: 256 GiB of f32 per tensor).
constexpr std::int64_t kMaxNormElements = std::int64_t{1} << 36;

struct NormShape {
  std::vector<std::int64_t> dims;
  std::int64_t rows = 1;  // product of the leading dims
  std::int64_t n = 1;     // the last dim
  std::string text;       // "64x128x56x56"
  std::int64_t elements() const { return rows * n; }
};

struct DtypeMix {
  std::string name;  // f32, bf16, mixed, f16, mixed_f16
  DType x;           // x, y, dy, dx
  DType param;       // gamma, beta, dgamma, dbeta
};

/// Parses "64x128x56x56": each dim in [1, 2^40], the product at most kMaxNormElements (checked
/// without overflow). Throws cli::UsageError.
NormShape parse_norm_shape(const std::string& text);
/// f32, bf16, mixed (bf16 x, f32 params), f16, mixed_f16 (f16 x, f32 params); throws UsageError.
DtypeMix parse_dtype_mix(const std::string& name);

/// Bytes that must move for one call (docs/PERFORMANCE.md, "Method", "Bytes counted"):
///   forward:  read x, write y ([rows, n] each, x's dtype); read gamma (and beta for LayerNorm)
///             ([n], param dtype); write rstd (and mean for LayerNorm) ([rows], f32).
///   backward: read x and dy, write dx ([rows, n] each); read rstd (and mean) ([rows], f32);
///             read gamma; write dgamma (and dbeta) ([n], param dtype).
std::int64_t bytes_moved(NormOp op, NormPass pass, const NormShape& s, const DtypeMix& d);

/// One measured case, as printed.
struct NormRow {
  NormOp op;
  NormPass pass;
  const NormShape* shape;
  const DtypeMix* dtype;
  int threads;
  Measurement ampkit;
  std::int64_t bytes;
  double copy_gbps;  // copy bandwidth at this case's footprint (`bytes`), same threads
  std::string kernel;
  std::optional<Measurement> peer;
  std::string peer_note;  // why there is no peer figure
  std::string peer_impl;
  std::string error;                // an ampkit::Error the kernel threw
  std::int64_t copy_footprint = 0;  // the footprint copy_gbps was measured at (capped at the DRAM class)
  double dram_copy_gbps = 0.0;      // copy bandwidth of the DRAM class, same threads
  double torch_ms = 0.0;            // PyTorch's median (0: not measured; torch_note says why)
  std::string torch_note;
};

/// GB/s of the row's median time.
double gbps(const NormRow& r);

}  // namespace ampkit::tools::bench
