// CUDA and cuBLASLt status codes as ampkit::Error (CUDA layer): see cuda_check.hpp.
#include "cuda/runtime/cuda_check.hpp"

#include "ampkit/core/error.hpp"

namespace ampkit::cuda {
namespace {

ErrorKind kind_of(cudaError_t status) {
  switch (status) {
    case cudaErrorMemoryAllocation: return ErrorKind::out_of_memory;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion: return ErrorKind::unsupported;
    default: return ErrorKind::internal;
  }
}

}  // namespace

void check_cuda(cudaError_t status, const char* fn, const char* what) {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();  // a non-sticky error must not surface again in the next call
  fail_with(kind_of(status), fn, what, " failed: ", cudaGetErrorString(status), " (", cudaGetErrorName(status), ")");
}

void check_cublas(cublasStatus_t status, const char* fn, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const ErrorKind kind = status == CUBLAS_STATUS_ALLOC_FAILED    ? ErrorKind::out_of_memory
                         : status == CUBLAS_STATUS_NOT_SUPPORTED ? ErrorKind::unsupported
                                                                 : ErrorKind::internal;
  fail_with(kind, fn, what, " failed: cuBLASLt status ", cublasLtGetStatusName(status), " (", static_cast<int>(status),
            "): ", cublasLtGetStatusString(status));
}

void check_launch(const char* fn, const char* kernel) { check_cuda(cudaGetLastError(), fn, kernel); }

}  // namespace ampkit::cuda
