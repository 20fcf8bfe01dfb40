// GEMM with fused epilogues (kernels layer), BLAS column-major convention.
//   D (m x n) = epilogue(alpha * op(A) (m x k) * op(B) (k x n) + beta * C)
// A, B, C, D dtypes each in {f32, bf16, f16}; accumulation in fp32; D rounded once.
// Epilogue semantics follow cuBLASLt (see docs/DESIGN.md section 4 and docs/NUMERICS.md).
// The fp16 mode (exact / flush / alt) is an explicit value handed down by the caller; the
// numerics layer (fp16_policy.hpp) decides it from the pass, the environment and the API.
// GemmArgs::device = Device::cuda runs the call on a GPU (cuBLASLt plus ampkit's epilogue
// kernels, docs/CUDA.md) with the same semantics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/kernel_info.hpp"

namespace ampkit {

/// op(X) = X (N) or X transposed (T).
enum class Op : std::uint8_t { N, T };

/// The fused epilogues (cuBLASLt's set; names kept so code ports 1:1).
enum class Epilogue : std::uint8_t {
  DEFAULT,
  BIAS,
  RELU,
  RELU_BIAS,
  RELU_AUX,
  RELU_AUX_BIAS,
  GELU,
  GELU_BIAS,
  GELU_AUX,
  GELU_AUX_BIAS,
  DGELU,
  DGELU_BGRAD,
  DRELU,
  DRELU_BGRAD,
  BGRADA,
  BGRADB,
};

/// The epilogue's name as the enumeration spells it ("GELU_AUX_BIAS"); "?" for a value outside it.
const char* epilogue_name(Epilogue e) noexcept;

/// The GELU formula: tanh approximation (cuBLASLt's) or exact erf form.
enum class GeluVariant : std::uint8_t { tanh, erf };

/// How fp16 operands are multiplied (see docs/NUMERICS.md, "fp16 modes").
///   exact: fp16 widened exactly to fp32, fp32 accumulation.
///   flush: MI200 model: fp16 subnormal inputs read as 0, fp16 subnormal outputs written as 0.
///   alt:   operands rounded to bf16 (nearest even), fp32 accumulation, output back to fp16.
enum class Fp16Mode : std::uint8_t { exact, flush, alt };

/// Epilogue parameters. Which pointers must be set depends on `kind` (DESIGN.md section 3):
///   bias       input,  length m (BIAS, RELU_BIAS, RELU_AUX_BIAS, GELU_BIAS, GELU_AUX_BIAS)
///   bias_grad  output, length m (DGELU_BGRAD, DRELU_BGRAD, BGRADA) or n (BGRADB)
///   aux        output for RELU_AUX*, GELU_AUX* (m x n, column-major, leading dim aux_ld): the
///              pre-activation value (after the bias add) for both RELU and GELU — not a bit
///              mask; input for DGELU* (gelu'(aux)) and DRELU* (aux > 0).
struct GemmEpilogue {
  Epilogue kind = Epilogue::DEFAULT;
  GeluVariant gelu = GeluVariant::tanh;
  const void* bias = nullptr;
  void* bias_grad = nullptr;
  DType bias_dtype = DType::f32;      // of bias or bias_grad: D's dtype or f32
  bool accumulate_bias_grad = false;  // bias_grad += sum (gradient accumulation) instead of =
  void* aux = nullptr;
  DType aux_dtype = DType::f32;  // D's dtype or f32
  std::int64_t aux_ld = 0;
};

/// One GEMM call. Matrices are column-major with the given leading dimensions (in elements).
/// C may be null when beta == 0; C may be the same matrix as D (same dtype and ld).
struct GemmArgs {
  Op op_a = Op::N, op_b = Op::N;
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  DType a_dtype = DType::f32;
  std::int64_t lda = 0;
  const void* b = nullptr;
  DType b_dtype = DType::f32;
  std::int64_t ldb = 0;
  const void* c = nullptr;
  DType c_dtype = DType::f32;
  std::int64_t ldc = 0;
  void* d = nullptr;
  DType d_dtype = DType::f32;
  std::int64_t ldd = 0;
  GemmEpilogue epilogue;
  Fp16Mode fp16_mode = Fp16Mode::exact;  // used when A or B is f16
  /// Where every matrix and vector of the call lives: host memory (cpu) or device memory of GPU
  /// device_index (cuda: the CUDA backend runs the call on that thread's stream; each pointer is
  /// checked to be device memory of that GPU, never read on the host; docs/CUDA.md).
  Device device = Device::cpu;
  int device_index = 0;
};

/// What a call did (optional out-parameter of gemm).
struct GemmReport {
  const char* kernel = "";                  // name of the kernel that ran
  bool fp16 = false;                        // A or B was f16
  Fp16Mode fp16_mode = Fp16Mode::exact;     // the mode used (meaningful when fp16)
  std::int64_t fp16_subnormal_inputs = 0;   // fp16 subnormal elements of A and B read
  std::int64_t fp16_subnormal_outputs = 0;  // fp16 outputs that rounded to a subnormal
  // On cuda, the two counts are taken only when a report is asked for and an operand or output
  // is f16 (a counting pass and a wait for the stream; other calls report zeros without
  // waiting); outputs counted: D and aux.
};

/// Runs the GEMM. Throws ampkit::Error (outputs untouched) on any invalid argument, and with
/// ErrorKind::out_of_memory when its workspace cannot grow.
/// alpha == 0 follows BLAS: op(A) op(B) is not computed, so Inf/NaN in A or B never reach D,
/// aux or a DGELU/DRELU bias gradient (D = epilogue(beta C)); BGRADA/BGRADB still sum their
/// operand, which they are defined on (docs/DESIGN.md section 3).
void gemm(const GemmArgs& args, GemmReport* report = nullptr);

/// The GEMM keeps a grow-only workspace per calling thread (packed operands, epilogue scratch:
/// about (m + n)·k·4 bytes after the largest call), so steady-state calls allocate nothing.
/// release_gemm_workspace frees the calling thread's; the next call allocates again.
void release_gemm_workspace() noexcept;

/// Bytes of GEMM workspace the calling thread holds now.
std::size_t gemm_workspace_bytes() noexcept;

/// Empty when gemm(args) would run; otherwise the message gemm(args) would throw. Never throws.
std::string gemm_check(const GemmArgs& args) noexcept;
/// Stage 1 of the check above, memory-free: the enumerations, device, sizes, leading dimensions,
/// the epilogue's dtypes and the byte sizes, with every pointer ignored (here a pointer also says
/// whether an operand is given, so which ones are set is stage 2, with null data, aliasing and
/// device memory). "" or the message gemm(args) would throw. Never throws. The view form
/// (gemm_views.hpp) is the one to build descriptors with: its views say presence themselves.
std::string gemm_descriptor_check(const GemmArgs& args) noexcept;

/// The kernel gemm(args) would use now (given AMPKIT_ISA and the machine). Throws like gemm.
const char* gemm_kernel_name(const GemmArgs& args);

/// Every kernel of the GEMM list, best first, with the reason it declines the call (empty when it
/// takes it) and the one the call would use marked. Throws like gemm.
std::vector<KernelStatus> gemm_kernel_statuses(const GemmArgs& args);

}  // namespace ampkit
