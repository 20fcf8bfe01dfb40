// The GEMM a peer is asked to time (tools layer, bench/peers/): the column-major BLAS view of
// ampkit's gemm, D (m x n) = op(A) (m x k) op(B) (k x n), and one peer measurement of it.
// Shared by the OpenBLAS and oneDNN matmul peers and the gemm / linear benches.
#pragma once

#include <cstdint>
#include <string>

#include "ampkit/ops/gemm.hpp"

namespace ampkit::tools::bench {

/// One GEMM shape with its operand ops.
struct PeerShape {
  std::int64_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::N;
  bool operator==(const PeerShape&) const = default;
};

/// One peer measurement (ms and GFLOP/s are NaN when it was not measured).
struct PeerPoint {
  PeerShape shape;
  int threads = 1;
  double ms = 0.0, gflops = 0.0;
};

/// "nn", "tn", "nt" or "tt" (op_a, op_b).
std::string op_pair_name(Op a, Op b);

}  // namespace ampkit::tools::bench
