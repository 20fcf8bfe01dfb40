// The execution context of the CUDA backend (CUDA layer, internal): per calling thread and
// device, the stream ops enqueue on, a grow-only device workspace, the cuBLASLt handle and its
// own workspace, and a small counter buffer. Used by the GEMM and norm kernels of src/cuda/.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

namespace ampkit::cuda {

/// cuBLASLt's workspace: 32 MiB, the size NVIDIA recommends for Hopper.
inline constexpr std::size_t kLtWorkspaceBytes = std::size_t{32} << 20;

struct CudaContext {
  int device = 0;
  cudaStream_t stream = nullptr;  // nullptr: the legacy default stream
  void* workspace = nullptr;      // grow-only, 256-byte aligned pieces carved per call
  std::size_t workspace_bytes = 0;
  void* lt_workspace = nullptr;  // kLtWorkspaceBytes once the first GEMM ran
  cublasLtHandle_t lt = nullptr;
  long long* counters = nullptr;  // 2 device counters (fp16 subnormal inputs, outputs)
  ~CudaContext();
};

/// The calling thread's context of `device` (created on first use; makes `device` current).
/// Throws Error naming `fn` with the CUDA message.
CudaContext& context(int device, const char* fn);

/// At least `bytes` of the context's workspace (grows after waiting for the stream; never
/// shrinks). Throws Error (out_of_memory) naming `fn`.
void* workspace(CudaContext& ctx, std::size_t bytes, const char* fn);

/// The cuBLASLt handle and its workspace, created on first use. Throws Error naming `fn`.
cublasLtHandle_t lt_handle(CudaContext& ctx, const char* fn);

/// Carves consecutive 256-byte aligned pieces out of one block of workspace.
class WorkspaceCarver {
 public:
  /// Adds a piece of `bytes`; returns its offset.
  std::size_t add(std::size_t bytes) {
    const std::size_t at = total_;
    total_ += (bytes + 255) / 256 * 256;
    return at;
  }
  std::size_t total() const { return total_; }

 private:
  std::size_t total_ = 0;
};

}  // namespace ampkit::cuda
