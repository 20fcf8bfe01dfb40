// LayerNorm and RMSNorm, forward and backward (kernels layer).
// x: [rows, n] row-major contiguous (n = product of the normalized trailing dims).
// x, y, dy, dx: one dtype in {f32, bf16, f16}. gamma, beta, dgamma, dbeta: x's dtype or f32
// (the "mixed" case autocast produces). Statistics and all reductions in fp32; each output is
// rounded once. Formulas and error bounds: docs/NUMERICS.md. Results are bitwise independent of
// the thread count.
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"

namespace ampkit {

/// A row-major [rows, n] operand: pointer and dtype (may be null when the operand is absent).
struct NormOperand {
  const void* data = nullptr;
  DType dtype = DType::f32;
};
struct NormOutput {
  void* data = nullptr;
  DType dtype = DType::f32;
};

struct NormForwardArgs {
  std::int64_t rows = 0;   // M >= 0
  std::int64_t n = 0;      // N >= 1
  NormOperand x;           // [rows, n]
  NormOperand gamma;       // [n] or absent
  NormOperand beta;        // [n] or absent (LayerNorm only; must be absent for RMSNorm)
  float eps = 1e-5f;       // >= 0, finite
  NormOutput y;            // [rows, n], x's dtype
  float* mean = nullptr;   // [rows] fp32 output (LayerNorm; optional), absent for RMSNorm
  float* rstd = nullptr;   // [rows] fp32 output (optional)
};

struct NormBackwardArgs {
  std::int64_t rows = 0;
  std::int64_t n = 0;
  NormOperand dy;              // [rows, n]
  NormOperand x;               // [rows, n], dy's dtype
  const float* mean = nullptr; // [rows] from the forward (LayerNorm), absent for RMSNorm
  const float* rstd = nullptr; // [rows] from the forward
  NormOperand gamma;           // [n] or absent (then treated as 1)
  NormOutput dx;               // [rows, n] or absent
  NormOutput dgamma;           // [n] or absent
  NormOutput dbeta;            // [n] or absent (LayerNorm only)
  bool accumulate = false;     // dgamma/dbeta += instead of =
};

/// y = (x - mean) * rstd * gamma + beta. Throws ampkit::Error (outputs untouched) on bad input.
void layer_norm_forward(const NormForwardArgs& args);
/// dx, dgamma, dbeta of layer_norm_forward. Throws ampkit::Error (outputs untouched).
void layer_norm_backward(const NormBackwardArgs& args);
/// y = x * rstd * gamma, rstd = 1/sqrt(mean(x^2) + eps). Throws ampkit::Error.
void rms_norm_forward(const NormForwardArgs& args);
/// dx, dgamma of rms_norm_forward. Throws ampkit::Error.
void rms_norm_backward(const NormBackwardArgs& args);

/// Name of the kernel the next call with these dtypes would use (e.g. "layer_norm_fwd_avx512").
const char* norm_kernel_name(bool rms, bool backward, DType x_dtype, DType param_dtype);

}  // namespace ampkit
