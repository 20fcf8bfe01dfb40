// Plain cuBLASLt, the peer of `ampkit bench gemm --device cuda` (tools layer, bench/peers/): one
// prepared matmul (descriptors and the heuristic's first algorithm chosen once, as a tuned user
// would), D = op(A) op(B) with the DEFAULT epilogue, A, B, D in one dtype, fp32 accumulation.
// Available when the build has the CUDA backend (AMPKIT_HAVE_CUDA); otherwise make() says why.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ampkit/core/dtype.hpp"
#include "ampkit/ops/gemm.hpp"

namespace ampkit::tools::bench {

class CublasLtPeer {
 public:
  /// Prepares the matmul on the calling thread's ampkit stream of GPU 0. Throws Error (with the
  /// cuBLASLt status) when cuBLASLt has no algorithm or the build has no CUDA.
  static std::unique_ptr<CublasLtPeer> make(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, DType t,
                                            const void* a, const void* b, void* d);
  virtual ~CublasLtPeer() = default;
  /// Enqueues one matmul (no wait).
  virtual void run() = 0;
};

}  // namespace ampkit::tools::bench
