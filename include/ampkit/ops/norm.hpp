// LayerNorm and RMSNorm, forward and backward (ops layer).
// x: [..., n] row-major contiguous; the trailing `normalized_rank` dims are normalized
// (n = their product), the leading dims are rows (rows = their product, 1 for none).
// x, y, dy, dx: one dtype in {f32, bf16, f16}. gamma, beta, dgamma, dbeta: x's dtype or f32
// (the "mixed" case autocast produces). Statistics and all reductions in fp32; each output is
// rounded once. Formulas and error bounds: docs/NUMERICS.md. Results are bitwise independent of
// the thread count. Every operand is a TensorView, all in cpu memory or all in device memory of
// one GPU (Device::cuda: the CUDA kernels run the call, docs/CUDA.md); an absent view
// (default-constructed) is an operand not given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/kernel_info.hpp"

namespace ampkit {

/// Which normalization: LayerNorm (mean and variance) or RMSNorm (root mean square).
enum class NormKind : std::uint8_t { layer, rms };

struct NormForwardArgs {
  TensorView x;             // [..., n], rows >= 0, n >= 1
  TensorView gamma;         // x's normalized dims ([n] by default) or absent
  TensorView beta;          // like gamma, or absent (LayerNorm only; absent for RMSNorm)
  float eps = 1e-5f;        // >= 0, finite
  TensorView y;             // x's shape and dtype
  TensorView mean;          // f32 [rows] (or x's leading dims), LayerNorm only; optional
  TensorView rstd;          // f32 [rows] (or x's leading dims); optional
  int normalized_rank = 1;  // trailing dims of x normalized together, in [1, x.rank]
};

struct NormBackwardArgs {
  TensorView dy;            // [..., n]: the shape every other operand is checked against
  TensorView x;             // dy's shape and dtype (needed for dx and dgamma)
  TensorView mean;          // f32 [rows] from the forward (LayerNorm), absent for RMSNorm
  TensorView rstd;          // f32 [rows] from the forward (needed for dx and dgamma)
  TensorView gamma;         // dy's normalized dims or absent (then treated as 1)
  TensorView dx;            // dy's shape and dtype, or absent
  TensorView dgamma;        // gamma's shape, or absent (needs gamma)
  TensorView dbeta;         // gamma's shape, or absent (LayerNorm only)
  bool accumulate = false;  // dgamma/dbeta += instead of =
  int normalized_rank = 1;  // as in the forward
};

/// y = (x - mean) * rstd * gamma + beta. Throws ampkit::Error (outputs untouched) on bad input:
/// invalid_argument for shapes, dtypes, null or overlapping memory, operands on two devices or a
/// cuda view whose pointer is not device memory of that GPU; unsupported for a cuda view when
/// no GPU can run (the message says why).
void layer_norm_forward(const NormForwardArgs& args);
/// dx, dgamma, dbeta of layer_norm_forward. Throws ampkit::Error (outputs untouched).
void layer_norm_backward(const NormBackwardArgs& args);
/// y = x * rstd * gamma, rstd = 1/sqrt(mean(x^2) + eps). Throws ampkit::Error.
void rms_norm_forward(const NormForwardArgs& args);
/// dx, dgamma of rms_norm_forward. Throws ampkit::Error.
void rms_norm_backward(const NormBackwardArgs& args);

/// Empty when the call of `kind` with `args` would run; otherwise the message it would throw.
/// Never throws.
std::string norm_check(NormKind kind, const NormForwardArgs& args) noexcept;
std::string norm_check(NormKind kind, const NormBackwardArgs& args) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string norm_descriptor_check(NormKind kind, const NormForwardArgs& args) noexcept;
std::string norm_descriptor_check(NormKind kind, const NormBackwardArgs& args) noexcept;

/// The kernel the call of `kind` with `args` would use now (given AMPKIT_ISA and the machine),
/// e.g. "layer_norm_fwd_avx512". Throws like the call.
const char* norm_kernel_name(NormKind kind, const NormForwardArgs& args);
const char* norm_kernel_name(NormKind kind, const NormBackwardArgs& args);

/// Every kernel of the op's list, best first, with the reason it declines the call (empty when
/// it takes it) and the one the call would use marked. Throws like the call.
std::vector<KernelStatus> norm_kernel_statuses(NormKind kind, const NormForwardArgs& args);
std::vector<KernelStatus> norm_kernel_statuses(NormKind kind, const NormBackwardArgs& args);

}  // namespace ampkit
