// Plain cuBLASLt, the peer of `ampkit bench gemm --device cuda` (tools layer): see
// cublaslt_peer.hpp. Compiled in every build; the cuBLASLt calls only with the CUDA backend.
#include "tools/ampkit/bench/peers/cublaslt_peer.hpp"

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"

#if defined(AMPKIT_HAVE_CUDA)
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#endif

namespace ampkit::tools::bench {

#if defined(AMPKIT_HAVE_CUDA)
namespace {

void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail_with(ErrorKind::unsupported, "cublaslt peer", what, " failed: ", cublasLtGetStatusName(status));
}

cudaDataType_t cuda_type(DType t) { return t == DType::f32 ? CUDA_R_32F : t == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F; }

class Peer final : public CublasLtPeer {
 public:
  Peer(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, DType t, const void* a, const void* b, void* d)
      : a_(a), b_(b), d_(d) {
    stream_ = static_cast<cudaStream_t>(cuda_stream(0));
    check(cublasLtCreate(&handle_), "cublasLtCreate");
    workspace_ = cuda_malloc(kWorkspace);
    check(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = op_a == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N,
                            tb = op_b == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "TRANSA");
    check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "TRANSB");
    const auto rows = [](Op op, std::int64_t r, std::int64_t c) {
      return static_cast<std::uint64_t>(op == Op::N ? r : c);
    };
    check(cublasLtMatrixLayoutCreate(&la_, cuda_type(t), rows(op_a, m, k), rows(op_a, k, m),
                                     static_cast<std::int64_t>(rows(op_a, m, k))),
          "layout A");
    check(cublasLtMatrixLayoutCreate(&lb_, cuda_type(t), rows(op_b, k, n), rows(op_b, n, k),
                                     static_cast<std::int64_t>(rows(op_b, k, n))),
          "layout B");
    check(
        cublasLtMatrixLayoutCreate(&ld_, cuda_type(t), static_cast<std::uint64_t>(m), static_cast<std::uint64_t>(n), m),
        "layout D");
    cublasLtMatmulPreference_t pref = nullptr;
    check(cublasLtMatmulPreferenceCreate(&pref), "preference");
    const std::uint64_t ws = kWorkspace;
    check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
          "workspace");
    int found = 0;
    const cublasStatus_t s =
        cublasLtMatmulAlgoGetHeuristic(handle_, desc_, la_, lb_, ld_, ld_, pref, 1, &result_, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    check(s, "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0) fail_with(ErrorKind::unsupported, "cublaslt peer", "no algorithm for this shape and dtype");
  }
  ~Peer() override {
    cuda_synchronize(0);
    cublasLtMatrixLayoutDestroy(ld_);
    cublasLtMatrixLayoutDestroy(lb_);
    cublasLtMatrixLayoutDestroy(la_);
    cublasLtMatmulDescDestroy(desc_);
    cublasLtDestroy(handle_);
    cuda_free(workspace_);
  }
  void run() override {
    const float alpha = 1.0f, beta = 0.0f;
    check(cublasLtMatmul(handle_, desc_, &alpha, a_, la_, b_, lb_, &beta, d_, ld_, d_, ld_, &result_.algo, workspace_,
                         kWorkspace, stream_),
          "cublasLtMatmul");
  }

 private:
  static constexpr std::size_t kWorkspace = std::size_t{32} << 20;
  const void* a_;
  const void* b_;
  void* d_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulHeuristicResult_t result_{};
  void* workspace_ = nullptr;
};

}  // namespace

std::unique_ptr<CublasLtPeer> CublasLtPeer::make(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                                                 DType t, const void* a, const void* b, void* d) {
  return std::make_unique<Peer>(op_a, op_b, m, n, k, t, a, b, d);
}
#else
std::unique_ptr<CublasLtPeer> CublasLtPeer::make(Op, Op, std::int64_t, std::int64_t, std::int64_t, DType, const void*,
                                                 const void*, void*) {
  fail_with(ErrorKind::unsupported, "cublaslt peer", cuda_unavailable_reason());
}
#endif

}  // namespace ampkit::tools::bench
