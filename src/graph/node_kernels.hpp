// The executor's per-op kernel binding (graph layer, internal): called by executor.cpp for each
// node, with every operand's memory in `data` (indexed by value id).
#pragma once

#include <vector>

#include "ampkit/graph/executor.hpp"
#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

/// Runs node `n` of `g` through the public ops API, every operand on options.device; sets
/// record.fp16_gemm / fp16_mode for GEMM nodes. Throws whatever the op's front end throws.
void run_node_kernel(const Graph& g, const Node& n, const std::vector<void*>& data, const ExecutorOptions& options,
                     NodeRecord& record);

}  // namespace ampkit::graph
