// The CUDA device (device layer, public): whether this build has the CUDA backend and a GPU, device
// memory helpers for callers that have no CUDA runtime of their own (tests, the bench), and the
// execution context of the calling thread (stream, workspace). Ops take device memory through
// their usual arguments: TensorView::device / GemmArgs::device = Device::cuda (docs/CUDA.md).
// In a build without the backend every call below reports that (unsupported) or returns 0.
#pragma once

#include <cstddef>
#include <string>

namespace ampkit {

/// True when this build has the CUDA backend (configured with AMPKIT_CUDA on and nvcc found).
bool cuda_built() noexcept;

/// Number of CUDA devices usable now (0 without the backend, a driver or a GPU).
int cuda_device_count() noexcept;

/// Why CUDA cannot run now ("this build has no CUDA backend", "no CUDA device: <CUDA message>"),
/// or "" when at least one device is usable.
std::string cuda_unavailable_reason();

/// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)". Throws Error (unsupported / invalid_argument).
std::string cuda_device_description(int device_index = 0);

/// Device memory of `device_index` (cudaMalloc; never managed memory). bytes == 0 gives null.
/// Throws Error: out_of_memory with the CUDA message, unsupported without a device.
void* cuda_malloc(std::size_t bytes, int device_index = 0);
/// Frees memory from cuda_malloc (null is ignored). Never throws.
void cuda_free(void* device_ptr) noexcept;

/// Copies between host and device memory (or device to device) on the calling thread's stream of
/// `device_index`, and waits for it. Throws Error with the CUDA message.
void cuda_copy_to_device(void* device_dst, const void* host_src, std::size_t bytes, int device_index = 0);
void cuda_copy_to_host(void* host_dst, const void* device_src, std::size_t bytes, int device_index = 0);
void cuda_copy_on_device(void* device_dst, const void* device_src, std::size_t bytes, int device_index = 0);
/// cuda_copy_on_device without the wait: enqueued on the calling thread's stream (the copy
/// bandwidth ceiling of `ampkit bench`).
void cuda_copy_on_device_async(void* device_dst, const void* device_src, std::size_t bytes, int device_index = 0);
/// Fills device memory with a byte value (poisoning outputs in the tests), and waits.
void cuda_fill_bytes(void* device_dst, int byte, std::size_t bytes, int device_index = 0);

/// Ops on `device_index` enqueue their work on the calling thread's stream for that device, and
/// return without waiting (except where a result goes to the host, e.g. GemmReport's counters).
/// The default is the legacy default stream, so plain cudaMemcpy calls order after them.
/// `stream` is a cudaStream_t (nullptr: the legacy default stream). Throws like cuda_malloc.
void set_cuda_stream(void* stream, int device_index = 0);
void* cuda_stream(int device_index = 0);
/// Waits for the calling thread's stream of `device_index`. Throws Error with the CUDA message
/// (an asynchronous kernel failure surfaces here).
void cuda_synchronize(int device_index = 0);

/// Bytes of device workspace the calling thread's context of `device_index` holds (grow-only:
/// operand conversions, the fp32 product of the epilogue kernels, reduction partials, cuBLASLt's
/// workspace). release_cuda_workspace waits for the stream and frees it.
std::size_t cuda_workspace_bytes(int device_index = 0) noexcept;
void release_cuda_workspace(int device_index = 0);

}  // namespace ampkit
