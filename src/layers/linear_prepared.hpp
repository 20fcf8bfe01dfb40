// A Linear call prepared once (layers layer, internal): validated in the layer's terms and each
// of its GEMMs prepared (ops::PreparedGemm: the GEMM problem validated and its entry selected),
// so a run only runs the GEMMs. The fp16 mode is in the GEMM problems and in their selection, so
// a run with another mode than the prepared one prepares again (a compare per run). Used by
// linear_forward / linear_backward (each a prepare and one run) and the graph's Linear nodes
// (src/graph/ops/linear.cpp), which keep one per node.
#pragma once

#include "ampkit/layers/linear.hpp"
#include "ops/prepared_ops.hpp"

namespace ampkit {

struct PreparedLinearForward {
  LinearForwardArgs args;  // as validated; fp16_mode: the mode the GEMM was prepared for
  bool empty = false;      // y has no element: no GEMM runs
  ops::PreparedGemm gemm;
};

struct PreparedLinearBackward {
  LinearBackwardArgs args;  // as validated; fp16_mode: the mode the GEMMs were prepared for
  bool nothing = false;     // dy absent: nothing requested
  bool run_dx = false, run_dw = false, zero_below_db = false;
  // db without dw: its GEMM multiplies by ones in the calling thread's workspace, which may move
  // between calls, so it is planned (and validated by gemm) at each run.
  bool run_db_alone = false;
  ops::PreparedGemm dx, dw;
  std::int64_t batch = 0, in = 0, out = 0;
  Device device = Device::cpu;
  int device_index = 0;
};

/// Validates like linear_forward / linear_backward (throws the same Errors) and prepares the GEMMs.
PreparedLinearForward prepare_linear_forward(const LinearForwardArgs& args);
PreparedLinearBackward prepare_linear_backward(const LinearBackwardArgs& args);

/// Runs a prepared call with the GEMMs' fp16 mode `mode` and fills `report` as the call does.
void run_prepared(PreparedLinearForward& call, Fp16Mode mode, LinearReport& report);
void run_prepared(PreparedLinearBackward& call, Fp16Mode mode, LinearReport& report);

}  // namespace ampkit
