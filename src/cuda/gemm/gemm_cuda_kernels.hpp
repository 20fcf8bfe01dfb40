// The GEMM's own CUDA kernels (CUDA layer, internal), launched by gemm_cuda.cpp around the
// cuBLASLt product: operand conversion for the fp16 modes, the epilogue on the fp32 product
// (what cuBLASLt does not implement as DESIGN.md section 4 defines), and the bias-gradient
// reductions in a fixed order. Defined in gemm_epilogue_cuda.cu and gemm_reduce_cuda.cu.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "ampkit/ops/gemm.hpp"
#include "ops/gemm/gemm_kernels.hpp"

namespace ampkit::cuda {

/// Columns of D (or k values of an operand) per fp32 partial of a bias gradient. Fixed, so the
/// bits never depend on the launch configuration: partial b of row r sums its block in order,
/// then the partials are added in block order.
inline constexpr std::int64_t kBiasGradBlock = 64;

/// dst (rows x cols, packed: ld = rows, dtype `to`) = src (rows x cols, column-major, ld, dtype
/// `from`) with the fp16 mode applied to f16 elements (flush: subnormal -> 0; alt: rounded to
/// bf16); f16 subnormal elements counted into *subnormals when it is not null. dst may be null
/// (count only).
void convert_matrix(const void* src, DType from, std::int64_t rows, std::int64_t cols, std::int64_t ld, void* dst,
                    DType to, bool flush, bool alt, long long* subnormals, cudaStream_t stream);

/// The epilogue on the fp32 product P (m x n, ld = m; null: no product, alpha = 0 or k = 0).
struct EpilogueLaunch {
  const float* product = nullptr;
  std::int64_t m = 0, n = 0;
  float beta = 0.0f;
  const void* c = nullptr;  // null when beta == 0
  DType c_dtype = DType::f32;
  std::int64_t ldc = 0;
  const void* bias = nullptr;
  DType bias_dtype = DType::f32;
  void* aux = nullptr;
  DType aux_dtype = DType::f32;
  std::int64_t aux_ld = 0;
  bool aux_out = false, aux_in = false;
  ops::GemmActivation activation = ops::GemmActivation::none;
  GeluVariant gelu = GeluVariant::tanh;
  void* d = nullptr;
  DType d_dtype = DType::f32;
  std::int64_t ldd = 0;
  bool flush = false;                      // f16 subnormal outputs written as 0
  long long* subnormal_outputs = nullptr;  // counted when not null
  float* bias_partials = nullptr;          // [ceil(n / kBiasGradBlock)][m] when not null
};
void gemm_epilogue(const EpilogueLaunch& e, cudaStream_t stream);

/// partials[b][r] = sum over kk in block b (kBiasGradBlock values, in order) of element
/// (r * r_stride + kk * k_stride) of base, widened exactly: BGRADA / BGRADB, as given.
void operand_sum_partials(const void* base, DType t, std::int64_t length, std::int64_t k, std::int64_t r_stride,
                          std::int64_t k_stride, float* partials, cudaStream_t stream);

/// out[r] = (out[r] when accumulate) + sum over b of partials[b][r] in block order, rounded once
/// to t (never flushed).
void reduce_partials(const float* partials, std::int64_t blocks, std::int64_t length, void* out, DType t,
                     bool accumulate, cudaStream_t stream);

}  // namespace ampkit::cuda
