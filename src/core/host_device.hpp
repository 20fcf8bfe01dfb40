// AMPKIT_HOST_DEVICE (core, internal): `__host__ __device__` under nvcc and empty for the host
// compiler, for the few formulas one definition serves to the CPU and the CUDA backend (the GELU
// scalar, the optimizer's step decision).
#pragma once

#if defined(__CUDACC__)
#define AMPKIT_HOST_DEVICE __host__ __device__
#else
#define AMPKIT_HOST_DEVICE
#endif
