// CUDA and cuBLASLt status codes as ampkit::Error (CUDA layer, internal): the calling function,
// the CUDA call and the runtime's own message, with the error kind mapped (allocation failure:
// out_of_memory; no device or driver: unsupported; anything else: internal). Used by every file
// of src/cuda/.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

namespace ampkit::cuda {

/// Throws Error("<fn>: <what> failed: <CUDA message> (<error name>)") unless status is
/// cudaSuccess; clears the runtime's sticky last error first.
void check_cuda(cudaError_t status, const char* fn, const char* what);

/// Throws Error("<fn>: <what> failed: cuBLASLt status <name> (<number>)") unless success.
void check_cublas(cublasStatus_t status, const char* fn, const char* what);

/// Throws the launch error of the kernel just enqueued, if any (cudaGetLastError).
void check_launch(const char* fn, const char* kernel);

}  // namespace ampkit::cuda
