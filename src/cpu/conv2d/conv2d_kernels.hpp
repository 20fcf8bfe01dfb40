// The convolution kernels of the CPU backend (kernels layer, internal): the entry points and the
// three kernel lists (forward, backward-data, backward-weight), best first, reference last, over
// the problem of src/ops/conv2d/conv2d_kernels.hpp. The CPU backend puts the lists in its row of
// the op table; the tests run each entry.
#pragma once

#include <span>

#include "ops/conv2d/conv2d_kernels.hpp"

namespace ampkit::cpu {

/// The reference (conv2d_reference.cpp): operands as the fp16 mode sees them, widened to double,
/// plain loops, double accumulation, one rounding to each output. Runs every pass.
void conv2d_reference(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters);

/// dbias = sum of dy over n, p, q (as given, never flushed: the GEMM's bias-gradient rule), in
/// double, rounded once (+ the old value when accumulating). Every entry's bias gradient.
void conv2d_bias_gradient(const ops::Conv2dProblem& p);

std::span<const ops::Conv2dEntry> conv2d_forward_kernels();
std::span<const ops::Conv2dEntry> conv2d_backward_data_kernels();
std::span<const ops::Conv2dEntry> conv2d_backward_weight_kernels();

}  // namespace ampkit::cpu
