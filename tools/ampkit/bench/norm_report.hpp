// The output of `ampkit bench norm` (tools layer, bench/): one JSON line per case, or a table
// row per case followed by the targets summary. Keys and columns are fixed: figures of
// different runs are compared line by line (docs/PERFORMANCE.md).
#pragma once

#include <string>
#include <vector>

#include "tools/ampkit/bench/norm_case.hpp"

namespace ampkit::tools::bench {

/// "12.34 us" below a millisecond, "1.23 ms" above.
std::string format_time(double ms);
/// One JSON object on stdout.
void print_norm_json(const NormRow& r);
void print_norm_table_header();
void print_norm_table_row(const NormRow& r);
/// The PyTorch phase's results (run after every ampkit case): a table of PyTorch's time and the
/// ratio PyTorch time / ampkit time per row, or one JSON line per row ("peer": "torch").
void print_norm_torch(const std::vector<NormRow>& rows, const std::string& version, bool json);
/// Where the run stands against the targets (table mode only): large shapes at >= 0.85 x copy,
/// mixed no slower than bf16, small shapes under 2 us.
void print_norm_targets(const std::vector<NormRow>& rows);

}  // namespace ampkit::tools::bench
