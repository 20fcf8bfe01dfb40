// One object per device (ops layer, internal): the device's memory (allocate/free, copies, fill),
// its execution context (stream, synchronize, workspace), what it can say about a pointer, and its
// kernel lists (ops/kernel_lists.hpp, one member per op list). Front ends and the layers above ask
// ops::backend(device) and never branch on the device themselves. The CPU backend is defined by
// src/cpu/common/cpu_backend.cpp, the CUDA backend by src/cuda/runtime/cuda_backend.cpp; a build
// without CUDA gets an absent CUDA backend (src/ops/backend.cpp) whose lists are empty and whose
// every action fails with its one reason. Each call is one virtual call: no per-call allocation.
#pragma once

#include <cstddef>
#include <string>

#include "ampkit/core/tensor.hpp"

namespace ampkit::ops {

struct KernelLists;  // ops/kernel_lists.hpp

class Backend {
 public:
  Backend(Device device, const char* name, const KernelLists& kernels)
      : device_(device), name_(name), kernels_(&kernels) {}
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  Device device() const { return device_; }
  const char* name() const { return name_; }  // "cpu", "cuda"
  /// The device's kernel lists, best first, the reference last (empty in an absent backend).
  const KernelLists& kernels() const { return *kernels_; }

  /// False for the absent backend of a build without it (CUDA configured off or no nvcc).
  virtual bool built() const = 0;
  /// Why this backend cannot run now ("this build has no CUDA backend (...)", "no CUDA device is
  /// usable: ..."), or nullptr. A static string: no allocation.
  virtual const char* unavailable() const = 0;
  /// Usable devices of this kind (0 when unavailable() is not null; the CPU is one device).
  virtual int usable_devices() const = 0;
  /// "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)", "cpu". Throws Error (unsupported, invalid_argument).
  virtual std::string device_description(int device_index) const = 0;
  /// Why `ptr` is not memory of device `device_index` of this backend ("host memory", "managed
  /// memory, which ampkit does not take", "memory of another GPU", ...), or nullptr. Static
  /// strings; the pointer is only looked up, never read. The CPU backend takes every pointer.
  virtual const char* pointer_problem(const void* ptr, int device_index) const = 0;

  /// Memory of `device_index` (cuda: cudaMalloc, never managed; cpu: 64-byte aligned). bytes == 0
  /// gives null. Throws Error: out_of_memory with the device's message, unsupported without it.
  virtual void* allocate(std::size_t bytes, int device_index = 0) const = 0;
  /// Frees memory from allocate (null is ignored). Never throws.
  virtual void deallocate(void* ptr) const noexcept = 0;
  /// Copies between host memory and this device's memory, or within the device, ordered on the
  /// calling thread's stream of `device_index`, and waits. Throws Error with the device's message.
  virtual void copy_to_device(void* dst, const void* host_src, std::size_t bytes, int device_index = 0) const = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes, int device_index = 0) const = 0;
  virtual void copy_on_device(void* dst, const void* src, std::size_t bytes, int device_index = 0) const = 0;
  /// copy_on_device without the wait (enqueued on the calling thread's stream).
  virtual void copy_on_device_async(void* dst, const void* src, std::size_t bytes, int device_index = 0) const = 0;
  /// Fills `bytes` bytes of device memory with `byte`, and waits.
  virtual void fill_bytes(void* dst, int byte, std::size_t bytes, int device_index = 0) const = 0;

  /// The calling thread's stream of `device_index` (cuda: a cudaStream_t, nullptr = the legacy
  /// default stream; cpu: always nullptr, work is done when the call returns).
  virtual void set_stream(void* stream, int device_index = 0) const = 0;
  virtual void* stream(int device_index = 0) const = 0;
  /// Waits for the calling thread's stream; an asynchronous failure surfaces here as an Error.
  virtual void synchronize(int device_index = 0) const = 0;
  /// Bytes of workspace the calling thread's context holds (grow-only), and its release.
  virtual std::size_t workspace_bytes(int device_index = 0) const noexcept = 0;
  virtual void release_workspace(int device_index = 0) const = 0;

 protected:
  ~Backend() = default;

 private:
  Device device_;
  const char* name_;
  const KernelLists* kernels_;
};

/// Every device kind with a backend object, in the order kernel_lists() reports them.
inline constexpr Device kBackendDevices[] = {Device::cpu, Device::cuda};

/// The backend of `device` (the objects live for the whole process).
const Backend& backend(Device device);

/// Each backend's object, for backend(): cpu_backend() by src/cpu, cuda_backend() by src/cuda or,
/// in a build without CUDA, the absent backend of src/ops/backend.cpp.
const Backend& cpu_backend();
const Backend& cuda_backend();

}  // namespace ampkit::ops
