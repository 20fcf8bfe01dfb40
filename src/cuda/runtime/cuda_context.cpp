// The execution context of the CUDA backend (CUDA layer): see cuda_context.hpp. One context per
// thread and device, so concurrent calls from several host threads never share a workspace.
#include "cuda/runtime/cuda_context.hpp"

#include <map>
#include <memory>

#include "ampkit/core/error.hpp"
#include "cuda/runtime/cuda_check.hpp"

namespace ampkit::cuda {

CudaContext::~CudaContext() {
  // At thread or process exit; the runtime may already be unloading: errors are ignored.
  if (workspace != nullptr || lt_workspace != nullptr || counters != nullptr) {
    (void)cudaSetDevice(device);
    (void)cudaStreamSynchronize(stream);
  }
  if (lt != nullptr) (void)cublasLtDestroy(lt);
  (void)cudaFree(workspace);
  (void)cudaFree(lt_workspace);
  (void)cudaFree(counters);
}

CudaContext& context(int device, const char* fn) {
  thread_local std::map<int, std::unique_ptr<CudaContext>> contexts;
  check_cuda(cudaSetDevice(device), fn, "cudaSetDevice");
  auto& slot = contexts[device];
  if (!slot) {
    auto ctx = std::make_unique<CudaContext>();
    ctx->device = device;
    void* counters = nullptr;
    check_cuda(cudaMalloc(&counters, 2 * sizeof(long long)), fn, "cudaMalloc of the counters");
    ctx->counters = static_cast<long long*>(counters);
    slot = std::move(ctx);
  }
  return *slot;
}

void* workspace(CudaContext& ctx, std::size_t bytes, const char* fn) {
  if (bytes <= ctx.workspace_bytes) return ctx.workspace;
  // Work already enqueued may still use the old block.
  check_cuda(cudaStreamSynchronize(ctx.stream), fn, "cudaStreamSynchronize before growing the workspace");
  check_cuda(cudaFree(ctx.workspace), fn, "cudaFree of the workspace");
  ctx.workspace = nullptr;
  ctx.workspace_bytes = 0;
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status != cudaSuccess)
    check_cuda(status, fn, detail::concat("cudaMalloc of ", bytes, " bytes of workspace").c_str());
  ctx.workspace = p;
  ctx.workspace_bytes = bytes;
  return p;
}

cublasLtHandle_t lt_handle(CudaContext& ctx, const char* fn) {
  if (ctx.lt == nullptr) check_cublas(cublasLtCreate(&ctx.lt), fn, "cublasLtCreate");
  if (ctx.lt_workspace == nullptr)
    check_cuda(cudaMalloc(&ctx.lt_workspace, kLtWorkspaceBytes), fn, "cudaMalloc of cuBLASLt's workspace");
  return ctx.lt;
}

}  // namespace ampkit::cuda
