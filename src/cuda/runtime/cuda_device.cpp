// The public CUDA device calls (include/ampkit/device/cuda.hpp) and the answers the front ends
// ask for (src/ops/device_memory.hpp): is there a usable GPU, is this pointer device memory of
// it. CUDA layer. Device availability is probed once per process.
#include <cstdio>
#include <mutex>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"
#include "ops/device_memory.hpp"

namespace ampkit {
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

}  // namespace

bool cuda_built() noexcept { return true; }

int cuda_device_count() noexcept {
  try {
    return probe().devices;
  } catch (...) {
    return 0;
  }
}

std::string cuda_unavailable_reason() { return probe().why; }

std::string cuda_device_description(int device_index) {
  require_device("cuda_device_description", device_index);
  cudaDeviceProp prop{};
  cuda::check_cuda(cudaGetDeviceProperties(&prop, device_index), "cuda_device_description", "cudaGetDeviceProperties");
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f", static_cast<double>(prop.totalGlobalMem) / (1u << 30));
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major * 10 + prop.minor) + ", " +
         std::to_string(prop.multiProcessorCount) + " SMs, " + memory + " GiB)";
}

void* cuda_malloc(std::size_t bytes, int device_index) {
  require_device("cuda_malloc", device_index);
  if (bytes == 0) return nullptr;
  cuda::context(device_index, "cuda_malloc");
  void* p = nullptr;
  cuda::check_cuda(cudaMalloc(&p, bytes), "cuda_malloc", detail::concat("cudaMalloc of ", bytes, " bytes").c_str());
  return p;
}

void cuda_free(void* device_ptr) noexcept {
  if (device_ptr != nullptr) (void)cudaFree(device_ptr);
}

namespace {

void copy(const char* fn, void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int device_index) {
  require_device(fn, device_index);
  if (bytes == 0) return;
  cuda::CudaContext& ctx = cuda::context(device_index, fn);
  cuda::check_cuda(cudaMemcpyAsync(dst, src, bytes, kind, ctx.stream), fn, "cudaMemcpyAsync");
  cuda::check_cuda(cudaStreamSynchronize(ctx.stream), fn, "cudaStreamSynchronize after the copy");
}

}  // namespace

void cuda_copy_to_device(void* dst, const void* src, std::size_t bytes, int device_index) {
  copy("cuda_copy_to_device", dst, src, bytes, cudaMemcpyHostToDevice, device_index);
}
void cuda_copy_to_host(void* dst, const void* src, std::size_t bytes, int device_index) {
  copy("cuda_copy_to_host", dst, src, bytes, cudaMemcpyDeviceToHost, device_index);
}
void cuda_copy_on_device(void* dst, const void* src, std::size_t bytes, int device_index) {
  copy("cuda_copy_on_device", dst, src, bytes, cudaMemcpyDeviceToDevice, device_index);
}

void cuda_copy_on_device_async(void* dst, const void* src, std::size_t bytes, int device_index) {
  require_device("cuda_copy_on_device_async", device_index);
  if (bytes == 0) return;
  cuda::CudaContext& ctx = cuda::context(device_index, "cuda_copy_on_device_async");
  cuda::check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx.stream), "cuda_copy_on_device_async",
                   "cudaMemcpyAsync");
}

void cuda_fill_bytes(void* dst, int byte, std::size_t bytes, int device_index) {
  require_device("cuda_fill_bytes", device_index);
  if (bytes == 0) return;
  cuda::CudaContext& ctx = cuda::context(device_index, "cuda_fill_bytes");
  cuda::check_cuda(cudaMemsetAsync(dst, byte, bytes, ctx.stream), "cuda_fill_bytes", "cudaMemsetAsync");
  cuda::check_cuda(cudaStreamSynchronize(ctx.stream), "cuda_fill_bytes", "cudaStreamSynchronize");
}

void set_cuda_stream(void* stream, int device_index) {
  require_device("set_cuda_stream", device_index);
  cuda::context(device_index, "set_cuda_stream").stream = static_cast<cudaStream_t>(stream);
}

void* cuda_stream(int device_index) {
  require_device("cuda_stream", device_index);
  return cuda::context(device_index, "cuda_stream").stream;
}

void cuda_synchronize(int device_index) {
  require_device("cuda_synchronize", device_index);
  cuda::CudaContext& ctx = cuda::context(device_index, "cuda_synchronize");
  cuda::check_cuda(cudaStreamSynchronize(ctx.stream), "cuda_synchronize", "cudaStreamSynchronize");
}

std::size_t cuda_workspace_bytes(int device_index) noexcept {
  try {
    if (device_index < 0 || device_index >= cuda_device_count()) return 0;
    const cuda::CudaContext& ctx = cuda::context(device_index, "cuda_workspace_bytes");
    return ctx.workspace_bytes + (ctx.lt_workspace != nullptr ? cuda::kLtWorkspaceBytes : 0);
  } catch (...) {
    return 0;
  }
}

void release_cuda_workspace(int device_index) {
  require_device("release_cuda_workspace", device_index);
  cuda::CudaContext& ctx = cuda::context(device_index, "release_cuda_workspace");
  cuda::check_cuda(cudaStreamSynchronize(ctx.stream), "release_cuda_workspace", "cudaStreamSynchronize");
  cuda::check_cuda(cudaFree(ctx.workspace), "release_cuda_workspace", "cudaFree");
  ctx.workspace = nullptr;
  ctx.workspace_bytes = 0;
}

namespace ops {

const char* cuda_unavailable() {
  const Probe& p = probe();
  return p.devices > 0 ? nullptr : p.why.c_str();
}

int cuda_usable_devices() { return probe().devices; }

const char* cuda_pointer_problem(const void* ptr, int device_index) {
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

}  // namespace ops
}  // namespace ampkit
