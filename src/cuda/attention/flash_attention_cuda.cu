// Causal flash attention on the tensor cores (CUDA layer): the forward and backward of
// docs/ATTENTION.md ("Flash kernels on the GPU") for bf16 / f16 q, k, v (and dout) at head dims
// 32, 64 and 128, never materializing the T x T matrix. mma.sync m16n8k16 (16-bit operands, fp32
// accumulators), operand tiles in shared memory loaded with cp.async (double-buffered) and read
// with ldmatrix; rows padded by 16 bytes, so the 8 rows of one ldmatrix hit 8 different bank groups.
//   Forward: a block of 4 warps per (128 query rows, batch * head; 64 at head dim 128); each warp
//   owns 32 rows (16), its Q fragments in registers; K/V tiles of 64 keys; online softmax in fp32 (base-2 exponent with
//   the scale folded in), the row sums from the fp32 probabilities, P rounded once to the operand dtype for P V; out =
//   O / l rounded once to out's dtype, lse = (m + log2 l) ln 2. Backward (FlashAttention-2's scheme, with a separate dQ
//   pass so that no sum depends on timing): Delta_i = dout_i . out_i (one warp a row, to workspace); a K/V kernel (a
//   block per 64 keys, each warp 16 keys) loops over the query tiles i >= j in order, recomputing P^T from lse and
//   accumulating dV = P^T dO and dK = dS^T Q in registers; a dQ kernel (a block per 64 query rows)
//   loops over the key tiles j <= i in order, recomputing P and dP, accumulating dQ = dS K. P and
//   dS are rounded once to the operand dtype before their products. No atomics: every output is
//   a fixed-order sum, so the bits depend on the data only. Entries of
//   attention_cuda_kernel_list.cpp, ahead of the plain kernels of attention_cuda.cu.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/attention/attention_cuda.hpp"
#include "cuda/common/element_cuda.cuh"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"

namespace ampkit::cuda {
namespace {

constexpr int kThreads = 128;  // 4 warps, each 16 rows (forward, dQ) or 16 keys (dK/dV)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// ---- PTX wrappers ----------------------------------------------------------------------------

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
// 16 bytes global -> shared; zero-filled when !valid (src must still be a valid address).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void ldsm_x4(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldsm_x4_t(std::uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
// c += a b, a 16x16 (row), b 16x8 (col), fp32 accumulators.
template <bool kBf16>
__device__ __forceinline__ void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  if constexpr (kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}
// Two floats rounded once (nearest even) to the operand dtype, packed low-first.
template <bool kBf16>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  std::uint32_t r;
  if constexpr (kBf16) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    r = *reinterpret_cast<const std::uint32_t*>(&v);
  } else {
    const __half2 v = __floats2half2_rn(lo, hi);
    r = *reinterpret_cast<const std::uint32_t*>(&v);
  }
  return r;
}
// The A fragment (16 rows x 16 of k) from two adjacent 16x8 accumulator blocks (k = their columns).
template <bool kBf16>
__device__ __forceinline__ void to_a(std::uint32_t (&a)[4], const float (&c0)[4], const float (&c1)[4]) {
  a[0] = pack2<kBf16>(c0[0], c0[1]);
  a[1] = pack2<kBf16>(c0[2], c0[3]);
  a[2] = pack2<kBf16>(c1[0], c1[1]);
  a[3] = pack2<kBf16>(c1[2], c1[3]);
}

// ---- shared-memory tiles ---------------------------------------------------------------------

// A tile of `kRows` rows of one head (kD 16-bit columns), row pitch kD + 8 elements.
template <int kD>
constexpr int kPitch = kD + 8;

// Rows [r0, r0 + kRows) of a head whose row 0 is at g (element row stride rs) into s; rows >= seq
// zero-filled.
template <int kRows, int kD>
__device__ __forceinline__ void load_tile(std::uint16_t* s, const std::uint16_t* g, std::int64_t rs, int r0, int seq) {
  constexpr int kChunks = kD / 8;
  for (int c = static_cast<int>(threadIdx.x); c < kRows * kChunks; c += kThreads) {
    const int r = c / kChunks, k = (c % kChunks) * 8;
    const bool ok = r0 + r < seq;
    cp_async16(s + r * kPitch<kD> + k, ok ? g + static_cast<std::int64_t>(r0 + r) * rs + k : g, ok);
  }
}
// ldmatrix addresses (lane's row pointer) for the fragment shapes used below, tile pitch P:
// A (16 x 16 at row r0, col k0) and B from a [n][k] tile (two 8-wide n blocks at n0, k16 at k0).
template <int kD>
__device__ __forceinline__ const std::uint16_t* a_addr(const std::uint16_t* s, int r0, int k0, int lane) {
  return s + (r0 + (lane % 8) + ((lane / 8) % 2) * 8) * kPitch<kD> + k0 + (lane / 16) * 8;
}
template <int kD>
__device__ __forceinline__ const std::uint16_t* bnk_addr(const std::uint16_t* s, int n0, int k0, int lane) {
  return s + (n0 + (lane % 8) + (lane / 16) * 8) * kPitch<kD> + k0 + ((lane / 8) % 2) * 8;
}
// B from a [k][n] tile (trans): k16 at row k0, two 8-wide n blocks at col n0.
template <int kD>
__device__ __forceinline__ const std::uint16_t* bkn_addr(const std::uint16_t* s, int k0, int n0, int lane) {
  return s + (k0 + (lane % 8) + ((lane / 8) % 2) * 8) * kPitch<kD> + n0 + (lane / 16) * 8;
}

// (batch, head) of blockIdx.x and the head's first element of an operand.
struct Head {
  std::int64_t b, h;
};
__device__ __forceinline__ Head head_of(std::int64_t heads) {
  return {static_cast<std::int64_t>(blockIdx.x) / heads, static_cast<std::int64_t>(blockIdx.x) % heads};
}
template <int kD>
__device__ __forceinline__ const std::uint16_t* head_ptr(const ops::AttentionInput& x, Head hd) {
  return static_cast<const std::uint16_t*>(x.data) + hd.b * x.batch_stride + hd.h * kD;
}

// Stores v (accumulating: old + v in fp32) at row i, column col of output y, rounded once.
__device__ __forceinline__ void put(const ops::AttentionOutput& y, Head hd, std::int64_t i, std::int64_t col, float v,
                                    bool accumulate) {
  const std::int64_t e = hd.b * y.batch_stride + i * y.row_stride + col;
  if (accumulate) v = load_as_float(y.data, y.dtype, e) + v;
  store_from_float(y.data, y.dtype, e, v);
}

// ---- forward ---------------------------------------------------------------------------------

// kM 16-row fragments a warp (2 at head dims <= 64: every K/V fragment read from shared memory
// feeds two MMAs; 1 at 128, where the registers would not hold two), 4 warps a block.
constexpr int kFwdKeys = 64;
template <int kD>
constexpr int kFwdM = kD > 64 ? 1 : 2;
template <int kD>
constexpr int kFwdRows = 64 * kFwdM<kD>;

template <int kD>
constexpr int fwd_smem_bytes() {
  return (kFwdRows<kD> + 4 * kFwdKeys) * kPitch<kD> * 2;
}

template <bool kBf16, int kD>
__global__ void __launch_bounds__(kThreads) flash_fwd_kernel(ops::AttentionForwardProblem p) {
  constexpr int kM = kFwdM<kD>, kRows = kFwdRows<kD>;
  extern __shared__ uint4 smem_raw[];
  std::uint16_t* sq = reinterpret_cast<std::uint16_t*>(smem_raw);
  std::uint16_t* sk = sq + kRows * kPitch<kD>;  // two buffers
  std::uint16_t* sv = sk + 2 * kFwdKeys * kPitch<kD>;
  const int seq = static_cast<int>(p.seq), lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32), g = lane / 4, t = lane % 4;
  const int q0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * kRows;  // longest tiles first
  const Head hd = head_of(p.heads);
  const std::uint16_t *gq = head_ptr<kD>(p.q, hd), *gk = head_ptr<kD>(p.k, hd), *gv = head_ptr<kD>(p.v, hd);
  const float c = p.scale * kLog2e;
  const int tiles = (min(q0 + kRows, seq) + kFwdKeys - 1) / kFwdKeys;
  load_tile<kRows, kD>(sq, gq, p.q.row_stride, q0, seq);
  load_tile<kFwdKeys, kD>(sk, gk, p.k.row_stride, 0, seq);
  load_tile<kFwdKeys, kD>(sv, gv, p.v.row_stride, 0, seq);
  cp_async_commit();

  std::uint32_t qf[kM][kD / 16][4];
  float o[kM][kD / 8][4] = {};
  float m[kM][2], l[kM][2];
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int r = 0; r < 2; ++r) m[mi][r] = -INFINITY, l[mi][r] = 0.0f;
  const int row0 = q0 + warp * 16 * kM + g;  // this thread's rows: row0 + 16 mi + 8 r
  for (int kt = 0; kt < tiles; ++kt) {
    const int buf = kt & 1;
    __syncthreads();  // every warp is done with buffer buf ^ 1
    if (kt + 1 < tiles) {
      load_tile<kFwdKeys, kD>(sk + (buf ^ 1) * kFwdKeys * kPitch<kD>, gk, p.k.row_stride, (kt + 1) * kFwdKeys, seq);
      load_tile<kFwdKeys, kD>(sv + (buf ^ 1) * kFwdKeys * kPitch<kD>, gv, p.v.row_stride, (kt + 1) * kFwdKeys, seq);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (kt == 0)
#pragma unroll
      for (int mi = 0; mi < kM; ++mi)
#pragma unroll
        for (int kk = 0; kk < kD / 16; ++kk) ldsm_x4(qf[mi][kk], a_addr<kD>(sq, (warp * kM + mi) * 16, kk * 16, lane));
    const std::uint16_t* skb = sk + buf * kFwdKeys * kPitch<kD>;
    const std::uint16_t* svb = sv + buf * kFwdKeys * kPitch<kD>;
    float s[kM][kFwdKeys / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
#pragma unroll
      for (int nb = 0; nb < kFwdKeys / 16; ++nb) {
        std::uint32_t b[4];
        ldsm_x4(b, bnk_addr<kD>(skb, nb * 16, kk * 16, lane));
#pragma unroll
        for (int mi = 0; mi < kM; ++mi) {
          mma<kBf16>(s[mi][2 * nb], qf[mi][kk], b[0], b[1]);
          mma<kBf16>(s[mi][2 * nb + 1], qf[mi][kk], b[2], b[3]);
        }
      }
    // Scale into base-2 exponents; tiles reaching past the block's first row mask keys j > i (and
    // so every key >= seq). A row whose keys in this tile are all masked keeps its m (finite: every
    // row saw key 0 in tile 0).
    const bool masked = (kt + 1) * kFwdKeys - 1 > q0;
#pragma unroll
    for (int mi = 0; mi < kM; ++mi) {
      float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int nb = 0; nb < kFwdKeys / 8; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int j = kt * kFwdKeys + nb * 8 + 2 * t + (e & 1), i = row0 + mi * 16 + (e >> 1) * 8;
          float v = s[mi][nb][e] * c;
          if (masked && j > i) v = -INFINITY;
          s[mi][nb][e] = v;
          mx[e >> 1] = fmaxf(mx[e >> 1], v);
        }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
        mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
        const float mn = fmaxf(m[mi][r], mx[r]);
        const float alpha = exp2f(m[mi][r] - mn);  // m = -inf before the first tile: 0
        m[mi][r] = mn;
        l[mi][r] *= alpha;
#pragma unroll
        for (int nb = 0; nb < kD / 8; ++nb) {
          o[mi][nb][2 * r] *= alpha;
          o[mi][nb][2 * r + 1] *= alpha;
        }
      }
#pragma unroll
      for (int nb = 0; nb < kFwdKeys / 8; ++nb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float pe = exp2f(s[mi][nb][e] - m[mi][e >> 1]);
          s[mi][nb][e] = pe;
          l[mi][e >> 1] += pe;
        }
    }
#pragma unroll
    for (int kk = 0; kk < kFwdKeys / 16; ++kk) {
      std::uint32_t a[kM][4];
#pragma unroll
      for (int mi = 0; mi < kM; ++mi) to_a<kBf16>(a[mi], s[mi][2 * kk], s[mi][2 * kk + 1]);
#pragma unroll
      for (int nd = 0; nd < kD / 16; ++nd) {
        std::uint32_t b[4];
        ldsm_x4_t(b, bkn_addr<kD>(svb, kk * 16, nd * 16, lane));
#pragma unroll
        for (int mi = 0; mi < kM; ++mi) {
          mma<kBf16>(o[mi][2 * nd], a[mi], b[0], b[1]);
          mma<kBf16>(o[mi][2 * nd + 1], a[mi], b[2], b[3]);
        }
      }
    }
  }
#pragma unroll
  for (int mi = 0; mi < kM; ++mi)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      l[mi][r] += __shfl_xor_sync(0xffffffffu, l[mi][r], 1);
      l[mi][r] += __shfl_xor_sync(0xffffffffu, l[mi][r], 2);
      const int i = row0 + mi * 16 + r * 8;
      if (i >= seq) continue;
      const float inv = 1.0f / l[mi][r];
#pragma unroll
      for (int nb = 0; nb < kD / 8; ++nb) {
        const std::int64_t col = hd.h * kD + nb * 8 + 2 * t;
        put(p.out, hd, i, col, o[mi][nb][2 * r] * inv, false);
        put(p.out, hd, i, col + 1, o[mi][nb][2 * r + 1] * inv, false);
      }
      if (t == 0) p.lse[(hd.b * p.heads + hd.h) * p.seq + i] = (m[mi][r] + log2f(l[mi][r])) * kLn2;
    }
}

// ---- backward --------------------------------------------------------------------------------

// Delta_i = dout_i . out_i (fp32, lanes over columns, a fixed butterfly), one warp a row.
__global__ void __launch_bounds__(kThreads) flash_delta_kernel(ops::AttentionBackwardProblem p, float* delta) {
  const std::int64_t rows = p.batch * p.heads * p.seq;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  const std::int64_t bh = row / p.seq, i = row - bh * p.seq, b = bh / p.heads, h = bh % p.heads;
  const std::int64_t d = p.head_dim, c0 = h * d;
  float s = 0.0f;
  for (std::int64_t x = threadIdx.x % 32; x < d; x += 32)
    s = fmaf(load_as_float(p.dout.data, p.dout.dtype, b * p.dout.batch_stride + i * p.dout.row_stride + c0 + x),
             load_as_float(p.out.data, p.out.dtype, b * p.out.batch_stride + i * p.out.row_stride + c0 + x), s);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  if (threadIdx.x % 32 == 0) delta[row] = s;
}

// dK/dV kernel: 64 keys a block; query tiles of kKvRows rows.
constexpr int kKvKeys = 64;
template <int kD>
constexpr int kKvRows = kD > 64 ? 32 : 64;
template <int kD>
constexpr int kv_smem_bytes() {
  return (2 * kKvKeys + 4 * kKvRows<kD>)*kPitch<kD> * 2 + 4 * kKvRows<kD> * 4;
}

template <bool kBf16, int kD>
__global__ void __launch_bounds__(kThreads) flash_bwd_kv_kernel(ops::AttentionBackwardProblem p, const float* delta) {
  constexpr int kRows = kKvRows<kD>;
  extern __shared__ uint4 smem_raw[];
  std::uint16_t* sk = reinterpret_cast<std::uint16_t*>(smem_raw);
  std::uint16_t* sv = sk + kKvKeys * kPitch<kD>;
  std::uint16_t* sq = sv + kKvKeys * kPitch<kD>;                         // two buffers
  std::uint16_t* sdo = sq + 2 * kRows * kPitch<kD>;                      // two buffers
  float* slse = reinterpret_cast<float*>(sdo + 2 * kRows * kPitch<kD>);  // two buffers, base-2
  float* sdelta = slse + 2 * kRows;                                      // two buffers
  const int seq = static_cast<int>(p.seq), lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32), g = lane / 4, t = lane % 4;
  const int k0 = static_cast<int>(blockIdx.y) * kKvKeys;  // small k0 (longest loops) first
  const Head hd = head_of(p.heads);
  const std::uint16_t *gq = head_ptr<kD>(p.q, hd), *gk = head_ptr<kD>(p.k, hd), *gv = head_ptr<kD>(p.v, hd),
                      *gdo = head_ptr<kD>(p.dout, hd);
  const std::int64_t stat0 = (hd.b * p.heads + hd.h) * p.seq;
  const float c = p.scale * kLog2e;
  const int first = k0 / kRows, tiles = (seq + kRows - 1) / kRows;
  const auto load_stats = [&](int it, int buf) {
    for (int r = static_cast<int>(threadIdx.x); r < kRows; r += kThreads) {
      const int i = it * kRows + r;
      slse[buf * kRows + r] = i < seq ? p.lse[stat0 + i] * kLog2e : INFINITY;
      sdelta[buf * kRows + r] = i < seq ? delta[stat0 + i] : 0.0f;
    }
  };
  load_tile<kKvKeys, kD>(sk, gk, p.k.row_stride, k0, seq);
  load_tile<kKvKeys, kD>(sv, gv, p.v.row_stride, k0, seq);
  load_tile<kRows, kD>(sq, gq, p.q.row_stride, first * kRows, seq);
  load_tile<kRows, kD>(sdo, gdo, p.dout.row_stride, first * kRows, seq);
  cp_async_commit();
  load_stats(first, 0);

  float dk[kD / 8][4] = {}, dv[kD / 8][4] = {};
  const int key0 = k0 + warp * 16 + g;  // this thread's keys: key0, key0 + 8
  for (int it = first; it < tiles; ++it) {
    const int buf = (it - first) & 1;
    __syncthreads();
    if (it + 1 < tiles) {
      load_tile<kRows, kD>(sq + (buf ^ 1) * kRows * kPitch<kD>, gq, p.q.row_stride, (it + 1) * kRows, seq);
      load_tile<kRows, kD>(sdo + (buf ^ 1) * kRows * kPitch<kD>, gdo, p.dout.row_stride, (it + 1) * kRows, seq);
      cp_async_commit();
      load_stats(it + 1, buf ^ 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const std::uint16_t* sqb = sq + buf * kRows * kPitch<kD>;
    const std::uint16_t* sdob = sdo + buf * kRows * kPitch<kD>;
    const float* lb = slse + buf * kRows;
    const float* db = sdelta + buf * kRows;
    // S^T = K Q^T and dP^T = V dO^T, 16 keys x kRows queries per warp.
    float st[kRows / 8][4] = {}, dpt[kRows / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk) {
      std::uint32_t ka[4], va[4];
      ldsm_x4(ka, a_addr<kD>(sk, warp * 16, kk * 16, lane));
      ldsm_x4(va, a_addr<kD>(sv, warp * 16, kk * 16, lane));
#pragma unroll
      for (int nb = 0; nb < kRows / 16; ++nb) {
        std::uint32_t b[4];
        ldsm_x4(b, bnk_addr<kD>(sqb, nb * 16, kk * 16, lane));
        mma<kBf16>(st[2 * nb], ka, b[0], b[1]);
        mma<kBf16>(st[2 * nb + 1], ka, b[2], b[3]);
        ldsm_x4(b, bnk_addr<kD>(sdob, nb * 16, kk * 16, lane));
        mma<kBf16>(dpt[2 * nb], va, b[0], b[1]);
        mma<kBf16>(dpt[2 * nb + 1], va, b[2], b[3]);
      }
    }
    // P^T = exp(S - lse) (0 where i < j), dS^T = P^T (dP^T - Delta).
#pragma unroll
    for (int nb = 0; nb < kRows / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int col = nb * 8 + 2 * t + (e & 1), i = it * kRows + col, j = key0 + (e >> 1) * 8;
        const float pe = i < j ? 0.0f : exp2f(st[nb][e] * c - lb[col]);
        st[nb][e] = pe;
        dpt[nb][e] = pe * (dpt[nb][e] - db[col]);
      }
      // dV += P^T dO, dK += dS^T Q.
#pragma unroll
    for (int kk = 0; kk < kRows / 16; ++kk) {
      std::uint32_t pa[4], sa[4];
      to_a<kBf16>(pa, st[2 * kk], st[2 * kk + 1]);
      to_a<kBf16>(sa, dpt[2 * kk], dpt[2 * kk + 1]);
#pragma unroll
      for (int nd = 0; nd < kD / 16; ++nd) {
        std::uint32_t b[4];
        ldsm_x4_t(b, bkn_addr<kD>(sdob, kk * 16, nd * 16, lane));
        mma<kBf16>(dv[2 * nd], pa, b[0], b[1]);
        mma<kBf16>(dv[2 * nd + 1], pa, b[2], b[3]);
        ldsm_x4_t(b, bkn_addr<kD>(sqb, kk * 16, nd * 16, lane));
        mma<kBf16>(dk[2 * nd], sa, b[0], b[1]);
        mma<kBf16>(dk[2 * nd + 1], sa, b[2], b[3]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int j = key0 + r * 8;
    if (j >= seq) continue;
#pragma unroll
    for (int nb = 0; nb < kD / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const std::int64_t col = hd.h * kD + nb * 8 + 2 * t + e;
        if (p.dk.data != nullptr) put(p.dk, hd, j, col, p.scale * dk[nb][2 * r + e], p.accumulate);
        if (p.dv.data != nullptr) put(p.dv, hd, j, col, dv[nb][2 * r + e], p.accumulate);
      }
  }
}

// dQ kernel: 64 query rows a block; key tiles of kQKeys keys.
constexpr int kQRows = 64;
template <int kD>
constexpr int kQKeys = kD > 64 ? 32 : 64;
template <int kD>
constexpr int q_smem_bytes() {
  return (2 * kQRows + 4 * kQKeys<kD>)*kPitch<kD> * 2;
}

template <bool kBf16, int kD>
__global__ void __launch_bounds__(kThreads) flash_bwd_q_kernel(ops::AttentionBackwardProblem p, const float* delta) {
  constexpr int kKeys = kQKeys<kD>;
  extern __shared__ uint4 smem_raw[];
  std::uint16_t* sq = reinterpret_cast<std::uint16_t*>(smem_raw);
  std::uint16_t* sdo = sq + kQRows * kPitch<kD>;
  std::uint16_t* sk = sdo + kQRows * kPitch<kD>;    // two buffers
  std::uint16_t* sv = sk + 2 * kKeys * kPitch<kD>;  // two buffers
  const int seq = static_cast<int>(p.seq), lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32), g = lane / 4, t = lane % 4;
  const int q0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * kQRows;
  const Head hd = head_of(p.heads);
  const std::uint16_t *gq = head_ptr<kD>(p.q, hd), *gk = head_ptr<kD>(p.k, hd), *gv = head_ptr<kD>(p.v, hd),
                      *gdo = head_ptr<kD>(p.dout, hd);
  const std::int64_t stat0 = (hd.b * p.heads + hd.h) * p.seq;
  const float c = p.scale * kLog2e;
  const int tiles = (min(q0 + kQRows, seq) + kKeys - 1) / kKeys;
  load_tile<kQRows, kD>(sq, gq, p.q.row_stride, q0, seq);
  load_tile<kQRows, kD>(sdo, gdo, p.dout.row_stride, q0, seq);
  load_tile<kKeys, kD>(sk, gk, p.k.row_stride, 0, seq);
  load_tile<kKeys, kD>(sv, gv, p.v.row_stride, 0, seq);
  cp_async_commit();
  const int row0 = q0 + warp * 16 + g;
  float lse2[2], dl[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = row0 + r * 8;
    lse2[r] = i < seq ? p.lse[stat0 + i] * kLog2e : INFINITY;
    dl[r] = i < seq ? delta[stat0 + i] : 0.0f;
  }
  std::uint32_t qf[kD / 16][4], df[kD / 16][4];
  float dq[kD / 8][4] = {};
  for (int kt = 0; kt < tiles; ++kt) {
    const int buf = kt & 1;
    __syncthreads();
    if (kt + 1 < tiles) {
      load_tile<kKeys, kD>(sk + (buf ^ 1) * kKeys * kPitch<kD>, gk, p.k.row_stride, (kt + 1) * kKeys, seq);
      load_tile<kKeys, kD>(sv + (buf ^ 1) * kKeys * kPitch<kD>, gv, p.v.row_stride, (kt + 1) * kKeys, seq);
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (kt == 0)
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        ldsm_x4(qf[kk], a_addr<kD>(sq, warp * 16, kk * 16, lane));
        ldsm_x4(df[kk], a_addr<kD>(sdo, warp * 16, kk * 16, lane));
      }
    const std::uint16_t* skb = sk + buf * kKeys * kPitch<kD>;
    const std::uint16_t* svb = sv + buf * kKeys * kPitch<kD>;
    float s[kKeys / 8][4] = {}, dp[kKeys / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < kD / 16; ++kk)
#pragma unroll
      for (int nb = 0; nb < kKeys / 16; ++nb) {
        std::uint32_t b[4];
        ldsm_x4(b, bnk_addr<kD>(skb, nb * 16, kk * 16, lane));
        mma<kBf16>(s[2 * nb], qf[kk], b[0], b[1]);
        mma<kBf16>(s[2 * nb + 1], qf[kk], b[2], b[3]);
        ldsm_x4(b, bnk_addr<kD>(svb, nb * 16, kk * 16, lane));
        mma<kBf16>(dp[2 * nb], df[kk], b[0], b[1]);
        mma<kBf16>(dp[2 * nb + 1], df[kk], b[2], b[3]);
      }
#pragma unroll
    for (int nb = 0; nb < kKeys / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = kt * kKeys + nb * 8 + 2 * t + (e & 1), r = e >> 1, i = row0 + r * 8;
        const float pe = j > i ? 0.0f : exp2f(s[nb][e] * c - lse2[r]);
        s[nb][e] = pe * (dp[nb][e] - dl[r]);  // dS
      }
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      std::uint32_t a[4];
      to_a<kBf16>(a, s[2 * kk], s[2 * kk + 1]);
#pragma unroll
      for (int nd = 0; nd < kD / 16; ++nd) {
        std::uint32_t b[4];
        ldsm_x4_t(b, bkn_addr<kD>(skb, kk * 16, nd * 16, lane));
        mma<kBf16>(dq[2 * nd], a, b[0], b[1]);
        mma<kBf16>(dq[2 * nd + 1], a, b[2], b[3]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int i = row0 + r * 8;
    if (i >= seq) continue;
#pragma unroll
    for (int nb = 0; nb < kD / 8; ++nb)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        put(p.dq, hd, i, hd.h * kD + nb * 8 + 2 * t + e, p.scale * dq[nb][2 * r + e], p.accumulate);
  }
}

// ---- launch ----------------------------------------------------------------------------------

template <class Kernel>
void set_smem(Kernel kernel, int bytes, const char* fn) {
  check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), fn,
             "cudaFuncSetAttribute (flash attention shared memory)");
}

template <bool kBf16, int kD>
void forward(const ops::AttentionForwardProblem& p, cudaStream_t stream) {
  constexpr int bytes = fwd_smem_bytes<kD>();
  set_smem(flash_fwd_kernel<kBf16, kD>, bytes, "attention_forward");
  const dim3 grid(static_cast<unsigned>(p.batch * p.heads),
                  static_cast<unsigned>((p.seq + kFwdRows<kD> - 1) / kFwdRows<kD>));
  flash_fwd_kernel<kBf16, kD><<<grid, kThreads, bytes, stream>>>(p);
  check_launch("attention_forward", "the flash forward kernel");
}

template <bool kBf16, int kD>
void backward(const ops::AttentionBackwardProblem& p, const float* delta, cudaStream_t stream) {
  const auto bh = static_cast<unsigned>(p.batch * p.heads);
  if (p.dk.data != nullptr || p.dv.data != nullptr) {
    constexpr int bytes = kv_smem_bytes<kD>();
    set_smem(flash_bwd_kv_kernel<kBf16, kD>, bytes, "attention_backward");
    const dim3 grid(bh, static_cast<unsigned>((p.seq + kKvKeys - 1) / kKvKeys));
    flash_bwd_kv_kernel<kBf16, kD><<<grid, kThreads, bytes, stream>>>(p, delta);
    check_launch("attention_backward", "the flash dK/dV kernel");
  }
  if (p.dq.data != nullptr) {
    constexpr int bytes = q_smem_bytes<kD>();
    set_smem(flash_bwd_q_kernel<kBf16, kD>, bytes, "attention_backward");
    const dim3 grid(bh, static_cast<unsigned>((p.seq + kQRows - 1) / kQRows));
    flash_bwd_q_kernel<kBf16, kD><<<grid, kThreads, bytes, stream>>>(p, delta);
    check_launch("attention_backward", "the flash dQ kernel");
  }
}

bool aligned(const ops::AttentionInput& x, std::int64_t batch, std::int64_t seq) {
  return reinterpret_cast<std::uintptr_t>(x.data) % 16 == 0 && (batch <= 1 || x.batch_stride % 8 == 0) &&
         (seq <= 1 || x.row_stride % 8 == 0);
}
bool is16(DType t) { return t == DType::bf16 || t == DType::f16; }
const char* head_dim_reason(std::int64_t d) {
  return d == 32 || d == 64 || d == 128 ? nullptr : "head_dim is not 32, 64 or 128";
}
// Grid limits: batch * heads blocks in x, seq / 64 in y.
const char* grid_reason(std::int64_t batch, std::int64_t heads, std::int64_t seq) {
  return batch * heads > 0x7fffffff || seq > 65535LL * 64 ? "batch * heads or seq beyond the grid's limits" : nullptr;
}

}  // namespace

const char* attention_forward_flash_declines(const ops::AttentionForwardProblem& p) {
  if (!is16(p.q.dtype) || p.k.dtype != p.q.dtype || p.v.dtype != p.q.dtype)
    return "q, k, v are not one 16-bit dtype (bf16 or f16): the plain kernel keeps fp32 products";
  if (const char* why = head_dim_reason(p.head_dim)) return why;
  if (!aligned(p.q, p.batch, p.seq) || !aligned(p.k, p.batch, p.seq) || !aligned(p.v, p.batch, p.seq))
    return "q, k or v not 16-byte aligned (data, batch and row strides in multiples of 8 elements)";
  return grid_reason(p.batch, p.heads, p.seq);
}

const char* attention_backward_flash_declines(const ops::AttentionBackwardProblem& p) {
  if (!is16(p.q.dtype) || p.k.dtype != p.q.dtype || p.v.dtype != p.q.dtype || p.dout.dtype != p.q.dtype)
    return "q, k, v, dout are not one 16-bit dtype (bf16 or f16): the plain kernel keeps fp32 products";
  if (const char* why = head_dim_reason(p.head_dim)) return why;
  if (!aligned(p.q, p.batch, p.seq) || !aligned(p.k, p.batch, p.seq) || !aligned(p.v, p.batch, p.seq) ||
      !aligned(p.dout, p.batch, p.seq))
    return "q, k, v or dout not 16-byte aligned (data, batch and row strides in multiples of 8 elements)";
  return grid_reason(p.batch, p.heads, p.seq);
}

void attention_forward_flash(const ops::AttentionForwardProblem& p) {
  const char* fn = "attention_forward";
  if (p.batch * p.heads * p.seq == 0) return;
  CudaContext& ctx = context(p.device_index, fn);
  const bool bf = p.q.dtype == DType::bf16;
  switch (p.head_dim) {
    case 32: bf ? forward<true, 32>(p, ctx.stream) : forward<false, 32>(p, ctx.stream); break;
    case 64: bf ? forward<true, 64>(p, ctx.stream) : forward<false, 64>(p, ctx.stream); break;
    default: bf ? forward<true, 128>(p, ctx.stream) : forward<false, 128>(p, ctx.stream); break;
  }
}

void attention_backward_flash(const ops::AttentionBackwardProblem& p) {
  const char* fn = "attention_backward";
  const std::int64_t rows = p.batch * p.heads * p.seq;
  if (rows == 0 || (p.dq.data == nullptr && p.dk.data == nullptr && p.dv.data == nullptr)) return;
  CudaContext& ctx = context(p.device_index, fn);
  auto* delta = static_cast<float*>(workspace(ctx, static_cast<std::size_t>(rows) * sizeof(float), fn));
  constexpr std::int64_t kRowsPerBlock = kThreads / 32;
  flash_delta_kernel<<<static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock), kThreads, 0, ctx.stream>>>(
      p, delta);
  check_launch(fn, "the flash Delta kernel");
  const bool bf = p.q.dtype == DType::bf16;
  switch (p.head_dim) {
    case 32: bf ? backward<true, 32>(p, delta, ctx.stream) : backward<false, 32>(p, delta, ctx.stream); break;
    case 64: bf ? backward<true, 64>(p, delta, ctx.stream) : backward<false, 64>(p, delta, ctx.stream); break;
    default: bf ? backward<true, 128>(p, delta, ctx.stream) : backward<false, 128>(p, delta, ctx.stream); break;
  }
}

}  // namespace ampkit::cuda
