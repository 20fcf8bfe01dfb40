// The CUDA backend (CUDA layer): device memory, copies and fills on the calling thread's stream,
// the stream and workspace of the execution context (cuda_context.hpp), what a pointer is, and
// the CUDA kernel lists. Device availability is probed once per process. The public calls of
// include/ampkit/device/cuda.hpp forward here (src/ops/cuda_device_api.cpp).
#include <cstdio>
#include <string>

#include "ampkit/core/error.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"
#include "cuda/runtime/cuda_kernel_lists.hpp"
#include "ops/backend.hpp"
#include "ops/kernel_lists.hpp"

namespace ampkit::cuda {
namespace {

// What the process found when it first asked: the usable device count, or why there is none.
struct Probe {
  int devices = 0;
  std::string why;  // empty when devices > 0
};

const Probe& probe() {
  static const Probe p = [] {
    Probe r;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      r.why = std::string("no CUDA device is usable: cudaGetDeviceCount failed: ") + cudaGetErrorString(status) + " (" +
              cudaGetErrorName(status) + ")";
      return r;
    }
    if (count == 0) {
      r.why = "no CUDA device is usable: cudaGetDeviceCount found none";
      return r;
    }
    // This build carries sm_90 code (and compute_90 PTX): Hopper or newer.
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess && prop.major < 9) {
      r.why = std::string("no CUDA device is usable: cuda:0 (") + prop.name + ") is sm_" +
              std::to_string(prop.major * 10 + prop.minor) + ", but this build's kernels need sm_90 or newer";
      return r;
    }
    r.devices = count;
    return r;
  }();
  return p;
}

void require_device(const char* fn, int device_index) {
  const Probe& p = probe();
  if (p.devices == 0) fail_with(ErrorKind::unsupported, fn, p.why);
  if (device_index < 0 || device_index >= p.devices)
    fail(fn, "device_index must be in [0, ", p.devices, "), but got ", device_index);
}

void copy(const char* fn, void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int device_index) {
  require_device(fn, device_index);
  if (bytes == 0) return;
  CudaContext& ctx = context(device_index, fn);
  check_cuda(cudaMemcpyAsync(dst, src, bytes, kind, ctx.stream), fn, "cudaMemcpyAsync");
  check_cuda(cudaStreamSynchronize(ctx.stream), fn, "cudaStreamSynchronize after the copy");
}

ops::KernelLists cuda_lists() {
  ops::KernelLists l;
  l.gemm = gemm_cuda_kernels();
  l.gemm_call = gemm_call;
  l.layer_norm_forward = layer_norm_fwd_cuda_kernels();
  l.layer_norm_backward = layer_norm_bwd_cuda_kernels();
  l.rms_norm_forward = rms_norm_fwd_cuda_kernels();
  l.rms_norm_backward = rms_norm_bwd_cuda_kernels();
  l.convert = convert_cuda_kernels();
  l.gelu = gelu_cuda_kernels();
  l.elementwise = elementwise_cuda_kernels();
  l.softmax_cross_entropy_forward = softmax_cross_entropy_forward_cuda_kernels();
  l.softmax_cross_entropy_backward = softmax_cross_entropy_backward_cuda_kernels();
  l.attention_forward = attention_forward_cuda_kernels();
  l.attention_backward = attention_backward_cuda_kernels();
  l.embedding_forward = embedding_forward_cuda_kernels();
  l.embedding_backward = embedding_backward_cuda_kernels();
  l.multi_tensor_step = multi_tensor_step_cuda_kernels();
  return l;  // sum_rows and the per-parameter optimizer ops have no CUDA kernels: empty
}

class CudaBackend final : public ops::Backend {
 public:
  CudaBackend() : Backend(Device::cuda, "cuda", lists_) {}

  bool built() const override { return true; }

  const char* unavailable() const override {
    const Probe& p = probe();
    return p.devices > 0 ? nullptr : p.why.c_str();
  }

  int usable_devices() const override { return probe().devices; }

  std::string device_description(int device_index) const override {
    require_device("cuda_device_description", device_index);
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, device_index), "cuda_device_description", "cudaGetDeviceProperties");
    char memory[32];
    std::snprintf(memory, sizeof memory, "%.1f", static_cast<double>(prop.totalGlobalMem) / (1u << 30));
    return std::string(prop.name) + " (sm_" + std::to_string(prop.major * 10 + prop.minor) + ", " +
           std::to_string(prop.multiProcessorCount) + " SMs, " + memory + " GiB)";
  }

  const char* pointer_problem(const void* ptr, int device_index) const override {
    cudaPointerAttributes attr{};
    const cudaError_t status = cudaPointerGetAttributes(&attr, ptr);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();
      return "memory CUDA does not know (cudaPointerGetAttributes failed)";
    }
    switch (attr.type) {
      case cudaMemoryTypeUnregistered: return "host memory (not known to CUDA)";
      case cudaMemoryTypeHost: return "pinned host memory";
      case cudaMemoryTypeManaged: return "managed memory, which ampkit does not take";
      case cudaMemoryTypeDevice: return attr.device == device_index ? nullptr : "device memory of another GPU";
    }
    return "memory of an unknown kind";
  }

  void* allocate(std::size_t bytes, int device_index) const override {
    require_device("cuda_malloc", device_index);
    if (bytes == 0) return nullptr;
    context(device_index, "cuda_malloc");
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, bytes), "cuda_malloc", detail::concat("cudaMalloc of ", bytes, " bytes").c_str());
    return p;
  }

  void deallocate(void* ptr) const noexcept override {
    if (ptr != nullptr) (void)cudaFree(ptr);
  }

  void copy_to_device(void* dst, const void* src, std::size_t bytes, int device_index) const override {
    copy("cuda_copy_to_device", dst, src, bytes, cudaMemcpyHostToDevice, device_index);
  }
  void copy_to_host(void* dst, const void* src, std::size_t bytes, int device_index) const override {
    copy("cuda_copy_to_host", dst, src, bytes, cudaMemcpyDeviceToHost, device_index);
  }
  void copy_on_device(void* dst, const void* src, std::size_t bytes, int device_index) const override {
    copy("cuda_copy_on_device", dst, src, bytes, cudaMemcpyDeviceToDevice, device_index);
  }

  void copy_on_device_async(void* dst, const void* src, std::size_t bytes, int device_index) const override {
    require_device("cuda_copy_on_device_async", device_index);
    if (bytes == 0) return;
    CudaContext& ctx = context(device_index, "cuda_copy_on_device_async");
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx.stream), "cuda_copy_on_device_async",
               "cudaMemcpyAsync");
  }

  void fill_bytes(void* dst, int byte, std::size_t bytes, int device_index) const override {
    require_device("cuda_fill_bytes", device_index);
    if (bytes == 0) return;
    CudaContext& ctx = context(device_index, "cuda_fill_bytes");
    check_cuda(cudaMemsetAsync(dst, byte, bytes, ctx.stream), "cuda_fill_bytes", "cudaMemsetAsync");
    check_cuda(cudaStreamSynchronize(ctx.stream), "cuda_fill_bytes", "cudaStreamSynchronize");
  }

  void set_stream(void* stream, int device_index) const override {
    require_device("set_cuda_stream", device_index);
    context(device_index, "set_cuda_stream").stream = static_cast<cudaStream_t>(stream);
  }

  void* stream(int device_index) const override {
    require_device("cuda_stream", device_index);
    return context(device_index, "cuda_stream").stream;
  }

  void synchronize(int device_index) const override {
    require_device("cuda_synchronize", device_index);
    CudaContext& ctx = context(device_index, "cuda_synchronize");
    check_cuda(cudaStreamSynchronize(ctx.stream), "cuda_synchronize", "cudaStreamSynchronize");
  }

  std::size_t workspace_bytes(int device_index) const noexcept override {
    try {
      if (device_index < 0 || device_index >= probe().devices) return 0;
      const CudaContext& ctx = context(device_index, "cuda_workspace_bytes");
      return ctx.workspace_bytes + (ctx.lt_workspace != nullptr ? kLtWorkspaceBytes : 0);
    } catch (...) {
      return 0;
    }
  }

  void release_workspace(int device_index) const override {
    require_device("release_cuda_workspace", device_index);
    CudaContext& ctx = context(device_index, "release_cuda_workspace");
    check_cuda(cudaStreamSynchronize(ctx.stream), "release_cuda_workspace", "cudaStreamSynchronize");
    check_cuda(cudaFree(ctx.workspace), "release_cuda_workspace", "cudaFree");
    ctx.workspace = nullptr;
    ctx.workspace_bytes = 0;
  }

 private:
  ops::KernelLists lists_ = cuda_lists();
};

}  // namespace
}  // namespace ampkit::cuda

namespace ampkit::ops {

const Backend& cuda_backend() {
  static const cuda::CudaBackend b;
  return b;
}

}  // namespace ampkit::ops
