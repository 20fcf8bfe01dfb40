// The pooling kernels of the CPU backend (kernels layer, internal): the entry points and the
// list, best first, reference last, over the problem of src/ops/pool2d/pool2d_kernels.hpp. The
// CPU backend (src/cpu/common/cpu_backend.cpp) puts the list in its row of the op table; the
// tests run each entry.
#pragma once

#include <span>

#include "ops/pool2d/pool2d_kernels.hpp"

namespace ampkit::cpu {

/// fp32 math, OpenMP over the N*C planes (each plane one thread's: the bits never depend on the
/// thread count); the backward gathers, per input element, the windows that hold it.
void pool2d_cpu(const ops::Pool2dProblem& p);
/// Plain loops, double sums, one rounding per output; the backward scatters into a double plane.
void pool2d_reference(const ops::Pool2dProblem& p);

/// Best first, reference last.
std::span<const ops::Pool2dEntry> pool2d_kernels();

}  // namespace ampkit::cpu
