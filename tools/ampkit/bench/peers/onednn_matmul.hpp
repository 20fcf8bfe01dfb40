// oneDNN matmul as a peer of `ampkit bench gemm` / `bench linear` (tools layer, bench/peers/),
// run in-process in a phase of its own; a stub that reports "not built" without oneDNN.
#pragma once

#include <string>

#include "ampkit/core/dtype.hpp"
#include "tools/ampkit/bench/peers/peer_shape.hpp"
#include "tools/ampkit/bench/timing.hpp"

namespace ampkit::tools::bench {

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
