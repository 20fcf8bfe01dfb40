// The GEMM epilogue and operand conversion kernels (CUDA layer), launched by gemm_cuda.cpp:
// x = P + beta C + bias (P: cuBLASLt's fp32 alpha op(A) op(B)), aux = x, D = act(x) rounded once,
// and the fp32 row sums of D's pre-rounding values per block of kBiasGradBlock columns. The
// scalar math follows src/cpu/gemm/gemm_reference.cpp; dtypes are runtime values, uniform per
// launch (one instantiation keeps the CUDA build short). Two kernels share the per-element math:
// a vector one (4 rows a thread, 16-byte product loads) and a plain one for any layout.
#include <cstdint>

#include "cuda/common/element_cuda.cuh"
#include "cuda/gemm/gemm_cuda_kernels.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "ops/activation/gelu_scalar.hpp"

namespace ampkit::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kBatch = 8;
constexpr int kRows = 4;  // rows of D per thread in the vector kernel
// Its columns loaded ahead of use per thread. The tanh GELU pass is issue-bound: on the H200, 2
// columns at 64 registers (4 blocks an SM) beat 4 at 80 (3 blocks) and 8 at 128 (2 blocks).
constexpr int kVecBatch = 2;
namespace gs = ops::gelu_scalar;  // the constants and erf formula shared with the CPU backend
using gs::kGeluCubic;
using gs::kSqrt2OverPi;

struct ExpAccurate {
  __device__ float operator()(float v) const { return expf(v); }
};
struct ErfcAccurate {
  __device__ float operator()(float v) const { return erfcf(v); }
};

// gelu(x): tanh form x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3), with the hardware
// exp2 and reciprocal (__expf, __fdividef: a few instructions where expf and an IEEE division
// take dozens; the pass must run at memory speed); erf form 0.5 x erfc(-x / sqrt(2)). Error of
// the tanh form: e = __expf(-2u) is within 2^-22.5 + 2^-24 |2u| of exact, relatively; x / (1 + e)
// moves by |x| e / (1 + e)^2 times that (e / (1 + e)^2 <= 1/4, |2u| e / (1 + e)^2 <= 0.224): at
// most 2^-24 |x|, plus __fdividef's 2 ulps. Past e = 2^126 (x below about -10) it gives -0.
__device__ __forceinline__ float gelu(float x, GeluVariant v) {
  if (v == GeluVariant::tanh) {
    const float u2 = gs::tanh_arg2(x);
    return __fdividef(x, 1.0f + __expf(-u2));
  }
  return gs::erf_value(x, ErfcAccurate{});
}

// gelu'(x): tanh form 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 0.044715 x^2), with
// t = tanh(u) = 1 - 2 / (1 + e^(2u)) from the hardware exp2 and reciprocal as in gelu (t within
// about 2^-22 of exact; e^(2u) = Inf gives t = 1, 0 gives -1); erf form
// 0.5 erfc(-x / sqrt(2)) + x exp(-x^2 / 2) / sqrt(2 pi).
__device__ __forceinline__ float gelu_derivative(float x, GeluVariant v) {
  if (v == GeluVariant::tanh) {
    const float u = kSqrt2OverPi * x * (1.0f + kGeluCubic * x * x);
    const float t = 1.0f - __fdividef(2.0f, 1.0f + __expf(2.0f * u));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
  }
  return gs::erf_derivative(x, ErfcAccurate{}, ExpAccurate{});
}

// One element, shared by both kernels so that they give the same bits: p the product (0 without
// one), c the C element, g the aux input. Returns act(x); *pre = x (the aux output).
__device__ __forceinline__ float epilogue_value(const EpilogueLaunch& e, float p, float c, float bias, float g,
                                                float* pre) {
  const float x = __fadd_rn(e.c != nullptr ? __fmaf_rn(e.beta, c, p) : p, bias);
  *pre = x;
  switch (e.activation) {
    case ops::GemmActivation::none: return x;
    case ops::GemmActivation::relu: return x < 0.0f ? 0.0f : x;
    case ops::GemmActivation::gelu: return gelu(x, e.gelu);
    case ops::GemmActivation::drelu: return g > 0.0f ? x : 0.0f;
    case ops::GemmActivation::dgelu: return __fmul_rn(x, gelu_derivative(g, e.gelu));
  }
  return x;
}

// v as stored in dtype t: an f16 result that is subnormal is counted and, under flush, zeroed.
__device__ __forceinline__ float output_value(DType t, float v, bool flush, long long& subnormals) {
  if (t == DType::f16) {
    const float r = __half2float(__float2half_rn(v));
    if (r != 0.0f && fabsf(r) < 0x1p-14f) {
      ++subnormals;
      if (flush) v = copysignf(0.0f, r);
    }
  }
  return v;
}

__device__ __forceinline__ void store_output(void* base, DType t, std::int64_t i, float v, bool flush,
                                             long long& subnormals) {
  store_from_float(base, t, i, output_value(t, v, flush, subnormals));
}

// Elements i..i+3 of a buffer of runtime dtype t; i * size(t) is a multiple of 4 * size(t) and
// the base is aligned to it (the vector kernel's precondition).
__device__ __forceinline__ void load4(const void* base, DType t, std::int64_t i, float (&v)[kRows]) {
  if (t == DType::f32) {
    const float4 q = *reinterpret_cast<const float4*>(static_cast<const float*>(base) + i);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else {
    const uint2 q = *reinterpret_cast<const uint2*>(static_cast<const unsigned short*>(base) + i);
    const unsigned short* h = reinterpret_cast<const unsigned short*>(&q);
#pragma unroll
    for (int r = 0; r < kRows; ++r) v[r] = load_as_float(h, t, r);
  }
}

__device__ __forceinline__ void store4(void* base, DType t, std::int64_t i, const float (&v)[kRows]) {
  if (t == DType::f32) {
    *reinterpret_cast<float4*>(static_cast<float*>(base) + i) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    uint2 q;
    unsigned short* h = reinterpret_cast<unsigned short*>(&q);
#pragma unroll
    for (int r = 0; r < kRows; ++r) store_from_float(h, t, r, v[r]);
    *reinterpret_cast<uint2*>(static_cast<unsigned short*>(base) + i) = q;
  }
}

// Work item: rows [4 q, 4 q + 4) of D over the columns of block jb (kBiasGradBlock columns, in
// column order: the row sums add them in order, as the plain kernel does). Items are numbered
// row group first, so a warp reads 512 consecutive bytes of P per column. Grid: a multiple of
// the SMs, striding over the items. Needs m, ldc, ldd, aux_ld multiples of 4 and 16-byte aligned
// P; C, D, aux aligned to 4 elements.
__global__ void __launch_bounds__(kThreads, 4) epilogue_vec4_kernel(EpilogueLaunch e) {
  const std::int64_t groups = e.m / kRows, blocks = (e.n + kBiasGradBlock - 1) / kBiasGradBlock;
  long long subnormals = 0;
  for (std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; item < groups * blocks;
       item += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const std::int64_t i = (item % groups) * kRows, jb = item / groups;
    const std::int64_t j0 = jb * kBiasGradBlock, j1 = j0 + kBiasGradBlock < e.n ? j0 + kBiasGradBlock : e.n;
    float bias[kRows] = {0.0f, 0.0f, 0.0f, 0.0f}, sum[kRows] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (e.bias != nullptr) load4(e.bias, e.bias_dtype, i, bias);
    for (std::int64_t jc = j0; jc < j1; jc += kVecBatch) {
      // kVecBatch columns: every load issued before any use (bytes in flight).
      float p[kVecBatch][kRows], c[kVecBatch][kRows], g[kVecBatch][kRows];
#pragma unroll
      for (int u = 0; u < kVecBatch; ++u) {
        const bool in = jc + u < j1;
#pragma unroll
        for (int r = 0; r < kRows; ++r) p[u][r] = c[u][r] = g[u][r] = 0.0f;
        if (in) {
          const float4 q = *reinterpret_cast<const float4*>(e.product + i + (jc + u) * e.m);
          p[u][0] = q.x, p[u][1] = q.y, p[u][2] = q.z, p[u][3] = q.w;
          if (e.c != nullptr) load4(e.c, e.c_dtype, i + (jc + u) * e.ldc, c[u]);
          if (e.aux_in) load4(e.aux, e.aux_dtype, i + (jc + u) * e.aux_ld, g[u]);
        }
      }
#pragma unroll
      for (int u = 0; u < kVecBatch; ++u) {
        if (jc + u >= j1) break;
        float out[kRows], pre[kRows];
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          out[r] = epilogue_value(e, p[u][r], c[u][r], bias[r], g[u][r], &pre[r]);
          sum[r] += out[r];
        }
        if (e.aux_out) {
#pragma unroll
          for (int r = 0; r < kRows; ++r) pre[r] = output_value(e.aux_dtype, pre[r], e.flush, subnormals);
          store4(e.aux, e.aux_dtype, i + (jc + u) * e.aux_ld, pre);
        }
#pragma unroll
        for (int r = 0; r < kRows; ++r) out[r] = output_value(e.d_dtype, out[r], e.flush, subnormals);
        store4(e.d, e.d_dtype, i + (jc + u) * e.ldd, out);
      }
    }
    if (e.bias_partials != nullptr)
      *reinterpret_cast<float4*>(e.bias_partials + jb * e.m + i) = make_float4(sum[0], sum[1], sum[2], sum[3]);
  }
  // Integer counts: the order of the additions cannot change them.
  if (e.subnormal_outputs != nullptr && subnormals != 0)
    atomicAdd(reinterpret_cast<unsigned long long*>(e.subnormal_outputs), static_cast<unsigned long long>(subnormals));
}

// Any layout. Thread: row i of D over columns [jb * kBiasGradBlock, +kBiasGradBlock), in column
// order (the warp reads consecutive rows: coalesced). Grid: x = column blocks, y strides over
// row tiles.
__global__ void epilogue_kernel(EpilogueLaunch e) {
  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.x) * kBiasGradBlock;
  const std::int64_t j1 = j0 + kBiasGradBlock < e.n ? j0 + kBiasGradBlock : e.n;
  long long subnormals = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.y) * kThreads + threadIdx.x; i < e.m;
       i += static_cast<std::int64_t>(gridDim.y) * kThreads) {
    const float bias = e.bias != nullptr ? load_as_float(e.bias, e.bias_dtype, i) : 0.0f;
    float row_sum = 0.0f;
    for (std::int64_t jb = j0; jb < j1; jb += kBatch) {
      const int count = static_cast<int>(j1 - jb < kBatch ? j1 - jb : kBatch);
      float p[kBatch], c[kBatch], g[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        p[u] = u < count && e.product != nullptr ? e.product[i + (jb + u) * e.m] : 0.0f;
        c[u] = u < count && e.c != nullptr ? load_as_float(e.c, e.c_dtype, i + (jb + u) * e.ldc) : 0.0f;
        g[u] = u < count && e.aux_in ? load_as_float(e.aux, e.aux_dtype, i + (jb + u) * e.aux_ld) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        if (u >= count) break;
        const std::int64_t j = jb + u;
        float pre;
        const float v = epilogue_value(e, p[u], c[u], bias, g[u], &pre);
        if (e.aux_out) store_output(e.aux, e.aux_dtype, i + j * e.aux_ld, pre, e.flush, subnormals);
        row_sum += v;
        store_output(e.d, e.d_dtype, i + j * e.ldd, v, e.flush, subnormals);
      }
    }
    if (e.bias_partials != nullptr) e.bias_partials[blockIdx.x * e.m + i] = row_sum;
  }
  if (e.subnormal_outputs != nullptr && subnormals != 0)
    atomicAdd(reinterpret_cast<unsigned long long*>(e.subnormal_outputs), static_cast<unsigned long long>(subnormals));
}

// Thread: one element of the packed destination (column-major walk of the source).
__global__ void convert_kernel(const void* src, DType from, std::int64_t rows, std::int64_t total, std::int64_t ld,
                               void* dst, DType to, bool flush, bool alt, long long* subnormal_count) {
  long long subnormals = 0;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x; idx < total;
       idx += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const std::int64_t r = idx % rows, c = idx / rows;
    float v = load_as_float(src, from, r + c * ld);
    if (from == DType::f16) {
      if (is_f16_subnormal(v)) {
        ++subnormals;
        if (flush) v = copysignf(0.0f, v);
      }
      if (alt) v = round_to_bf16(v);
    }
    if (dst != nullptr) store_from_float(dst, to, idx, v);
  }
  if (subnormal_count != nullptr && subnormals != 0)
    atomicAdd(reinterpret_cast<unsigned long long*>(subnormal_count), static_cast<unsigned long long>(subnormals));
}

unsigned grid_for(std::int64_t items, std::int64_t cap) {
  const std::int64_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > cap ? cap : blocks);
}

// p holds whole 4-element groups at 4-element boundaries: aligned to 4 elements of t (16
// bytes for f32) and ld a multiple of 4. Null (absent) qualifies.
bool vec4_ok(const void* p, DType t, std::int64_t ld) {
  const std::uintptr_t align = 4 * dtype_size(t);
  return p == nullptr || (reinterpret_cast<std::uintptr_t>(p) % align == 0 && ld % kRows == 0);
}

bool use_vec4(const EpilogueLaunch& e) {
  return e.product != nullptr && e.m % kRows == 0 && vec4_ok(e.product, DType::f32, e.m) &&
         vec4_ok(e.c, e.c_dtype, e.ldc) && vec4_ok(e.bias, e.bias_dtype, 0) && vec4_ok(e.d, e.d_dtype, e.ldd) &&
         vec4_ok(e.aux_out || e.aux_in ? e.aux : nullptr, e.aux_dtype, e.aux_ld) &&
         vec4_ok(e.bias_partials, DType::f32, e.m);
}

// Resident blocks of the vector kernel on the current device: the grid that fills every SM once.
std::int64_t vec4_resident_blocks() {
  int device = 0, sms = 0, per_sm = 0;
  check_cuda(cudaGetDevice(&device), "gemm", "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "gemm",
             "cudaDeviceGetAttribute(multiProcessorCount)");
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, epilogue_vec4_kernel, kThreads, 0), "gemm",
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return static_cast<std::int64_t>(sms) * (per_sm > 0 ? per_sm : 1);
}

}  // namespace

void convert_matrix(const void* src, DType from, std::int64_t rows, std::int64_t cols, std::int64_t ld, void* dst,
                    DType to, bool flush, bool alt, long long* subnormals, cudaStream_t stream) {
  const std::int64_t total = rows * cols;
  if (total == 0) return;
  convert_kernel<<<grid_for(total, 1 << 20), kThreads, 0, stream>>>(src, from, rows, total, ld, dst, to, flush, alt,
                                                                    subnormals);
  check_launch("gemm", "the operand conversion kernel");
}

void gemm_epilogue(const EpilogueLaunch& e, cudaStream_t stream) {
  if (e.m == 0 || e.n == 0) return;
  if (use_vec4(e)) {
    const std::int64_t items = e.m / kRows * ((e.n + kBiasGradBlock - 1) / kBiasGradBlock);
    epilogue_vec4_kernel<<<grid_for(items, vec4_resident_blocks()), kThreads, 0, stream>>>(e);
    check_launch("gemm", "the vector epilogue kernel");
    return;
  }
  const dim3 grid(static_cast<unsigned>((e.n + kBiasGradBlock - 1) / kBiasGradBlock), grid_for(e.m, 65535));
  epilogue_kernel<<<grid, kThreads, 0, stream>>>(e);
  check_launch("gemm", "the epilogue kernel");
}

}  // namespace ampkit::cuda
