// The GELU kernels of the CPU backend (kernels layer, internal): the kernel entry points of every
// ISA and the kernel lists, best first, reference last, over the neutral problem of
// src/ops/activation/activation_kernels.hpp. Defined in src/cpu/activation/; the CPU backend
// (src/cpu/common/cpu_backend.cpp) puts the lists in its row of the op table; the tests run each
// entry. Mirrors src/cuda/<op>/*_cuda.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "ops/activation/activation_kernels.hpp"

namespace ampkit::cpu {

/// fp32 math of the GEMM epilogue (cpu/math/gelu_math.hpp), OpenMP over tiles of rows.
void gelu_cpu(const ops::GeluProblem& p);
/// Double math (std::tanh, std::erf), one rounding per output.
void gelu_reference(const ops::GeluProblem& p);

/// Best first, reference last.
std::span<const ops::GeluEntry> gelu_kernels();

}  // namespace ampkit::cpu
