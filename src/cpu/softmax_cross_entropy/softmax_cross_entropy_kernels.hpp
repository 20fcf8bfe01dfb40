// The softmax cross-entropy kernels of the CPU backend (kernels layer, internal): the kernel entry
// points of every ISA and the kernel lists, best first, reference last, over the neutral problem of
// src/ops/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp. Defined in
// src/cpu/softmax_cross_entropy/; the CPU backend (src/cpu/common/cpu_backend.cpp) puts the lists
// in its row of the op table; the tests run each entry. Mirrors src/cuda/<op>/*_cuda.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "ops/softmax_cross_entropy/softmax_cross_entropy_kernels.hpp"

namespace ampkit::cpu {

/// Classes per block of the row sum of exponentials: fp32 partials of kSoftmaxBlock classes,
/// added in block order. Fixed, so the result never depends on the thread count.
inline constexpr std::int64_t kSoftmaxBlock = 256;

/// fp32 math (gemm_math::exp_f32), OpenMP over rows, the mean over rows in fp64 in row order.
void softmax_cross_entropy_forward_cpu(const ops::SoftmaxCrossEntropyProblem& p);
void softmax_cross_entropy_backward_cpu(const ops::SoftmaxCrossEntropyProblem& p);
/// Double math, one rounding per output.
void softmax_cross_entropy_forward_reference(const ops::SoftmaxCrossEntropyProblem& p);
void softmax_cross_entropy_backward_reference(const ops::SoftmaxCrossEntropyProblem& p);
/// The mean loss in double without rounding (the reference forward rounds it once; the tests take
/// finite differences of it).
double softmax_cross_entropy_loss_reference(const ops::SoftmaxCrossEntropyProblem& p);

/// Best first, reference last.
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_forward_kernels();
std::span<const ops::SoftmaxCrossEntropyEntry> softmax_cross_entropy_backward_kernels();

}  // namespace ampkit::cpu
