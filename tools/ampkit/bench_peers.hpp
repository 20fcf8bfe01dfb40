// The GEMM peers of `ampkit bench gemm` / `bench linear` (tools layer): OpenBLAS sgemm, run in a
// helper process of its own (peer_openblas.cpp spawns bench/peers/openblas_peer.cpp's program),
// and oneDNN matmul, run in-process in a phase of its own (peer_onednn_matmul.cpp).
// Both take the column-major BLAS view of ampkit's gemm: D (m x n) = op(A) (m x k) op(B) (k x n).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/ops/gemm.hpp"
#include "tools/ampkit/bench_util.hpp"

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

/// "nn", "tn" or "nt" (op_a, op_b).
std::string op_pair_name(Op a, Op b);

/// Runs OpenBLAS sgemm on every shape with `threads` threads in a child process
/// (ampkit_openblas_peer next to this executable; OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed
/// from its environment only, OPENBLAS_NUM_THREADS set). Returns the points it printed; on
/// failure an empty list and `note` says why. `note` also receives the core OpenBLAS chose.
std::vector<PeerPoint> run_openblas_peer(const std::vector<PeerShape>& shapes, int threads,
                                         int reps, double min_ms, std::string& note);

/// What the oneDNN matmul is asked to fuse (its closest match to an ampkit epilogue).
enum class OnednnPostOp { none, bias, bias_gelu_tanh };

/// True when this build has oneDNN (libdnnl-dev at configure time).
bool onednn_available();

/// Times oneDNN matmul for D = op(A) op(B) (+ bias) (+ gelu_tanh) with A, B, D in `dtype`
/// (f32 or bf16; bias f32) on `threads` threads, plain (non-prepacked) layouts, buffers
/// allocated once. Returns NaN ms when oneDNN is missing or declines; `note` says why.
PeerPoint onednn_matmul_time(const PeerShape& shape, DType dtype, OnednnPostOp post, int threads,
                             const MeasureOptions& options, std::string& note);

}  // namespace ampkit::tools::bench
