// The public CUDA device calls (include/ampkit/device/cuda.hpp) over the CUDA backend (ops
// layer): each forwards to ops::backend(Device::cuda), so a build without CUDA answers from the
// absent backend's one reason.
#include "ampkit/device/cuda.hpp"
#include "ops/backend.hpp"

namespace ampkit {
namespace {

const ops::Backend& gpu() { return ops::backend(Device::cuda); }

}  // namespace

bool cuda_built() noexcept { return gpu().built(); }
int cuda_device_count() noexcept {
  try {
    return gpu().usable_devices();
  } catch (...) {
    return 0;
  }
}
std::string cuda_unavailable_reason() {
  const char* why = gpu().unavailable();
  return why != nullptr ? why : "";
}
std::string cuda_device_description(int device_index) { return gpu().device_description(device_index); }
void* cuda_malloc(std::size_t bytes, int device_index) { return gpu().allocate(bytes, device_index); }
void cuda_free(void* device_ptr) noexcept { gpu().deallocate(device_ptr); }
void cuda_copy_to_device(void* dst, const void* src, std::size_t bytes, int device_index) {
  gpu().copy_to_device(dst, src, bytes, device_index);
}
void cuda_copy_to_host(void* dst, const void* src, std::size_t bytes, int device_index) {
  gpu().copy_to_host(dst, src, bytes, device_index);
}
void cuda_copy_on_device(void* dst, const void* src, std::size_t bytes, int device_index) {
  gpu().copy_on_device(dst, src, bytes, device_index);
}
void cuda_copy_on_device_async(void* dst, const void* src, std::size_t bytes, int device_index) {
  gpu().copy_on_device_async(dst, src, bytes, device_index);
}
void cuda_fill_bytes(void* dst, int byte, std::size_t bytes, int device_index) {
  gpu().fill_bytes(dst, byte, bytes, device_index);
}
void set_cuda_stream(void* stream, int device_index) { gpu().set_stream(stream, device_index); }
void* cuda_stream(int device_index) { return gpu().stream(device_index); }
void cuda_synchronize(int device_index) { gpu().synchronize(device_index); }
std::size_t cuda_workspace_bytes(int device_index) noexcept { return gpu().workspace_bytes(device_index); }
void release_cuda_workspace(int device_index) { gpu().release_workspace(device_index); }

}  // namespace ampkit
