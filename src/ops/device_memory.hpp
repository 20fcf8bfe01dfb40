// What the front ends ask the device layer about CUDA operands (ops layer, internal): whether the
// backend can run now, and whether a pointer is device memory of the named GPU. Declared here,
// defined by src/cuda/runtime/cuda_device.cpp, or by src/no_cuda/no_cuda_backend.cpp in a build
// without the backend. Pointers are only looked up (cudaPointerGetAttributes), never read.
#pragma once

namespace ampkit::ops {

/// Why CUDA kernels cannot run now ("this build has no CUDA backend (configure with
/// -DAMPKIT_CUDA=ON)", "no CUDA device: ..."), or nullptr. A static string: no allocation.
const char* cuda_unavailable();

/// Number of usable CUDA devices (0 when cuda_unavailable() is not null).
int cuda_usable_devices();

/// Why `ptr` is not device memory of cuda:`device_index` ("host memory", "managed memory, which
/// ampkit does not take", "memory of another GPU", ...), or nullptr. Static strings.
const char* cuda_pointer_problem(const void* ptr, int device_index);

}  // namespace ampkit::ops
