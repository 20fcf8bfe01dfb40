// The convolution kernels of the CPU backend (kernels layer, internal): the entry points and the
// three kernel lists (forward, backward-data, backward-weight), best first, reference last, over
// the problem of src/ops/conv2d/conv2d_kernels.hpp. The CPU backend puts the lists in its row of
// the op table; the tests run each entry.
#pragma once

#include <span>

#include "ops/conv2d/conv2d_kernels.hpp"

namespace ampkit::cpu {

/// Runs the function of the problem's pass: every entry's dispatch.
inline void run_pass(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters, ops::Conv2dFn forward,
                     ops::Conv2dFn backward_data, ops::Conv2dFn backward_weight) {
  const ops::Conv2dFn fn = p.pass == ops::Conv2dPass::forward         ? forward
                           : p.pass == ops::Conv2dPass::backward_data ? backward_data
                                                                      : backward_weight;
  fn(p, counters);
}

/// The reference (conv2d_reference.cpp): operands as the fp16 mode sees them, widened to double,
/// plain loops, double accumulation, one rounding to each output. Runs every pass.
void conv2d_reference(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters);

/// dbias = sum of dy over n, p, q (as given, never flushed: the GEMM's bias-gradient rule), in
/// double, rounded once (+ the old value when accumulating). Every entry's bias gradient.
void conv2d_bias_gradient(const ops::Conv2dProblem& p);

/// The 1x1 convolution on the blocked GEMM engines (conv2d_gemm.cpp), and what it declines.
void conv2d_1x1_gemm(const ops::Conv2dProblem& p, ops::Conv2dCounters& counters);
const char* conv2d_1x1_gemm_declines(const ops::Conv2dProblem& p);

std::span<const ops::Conv2dEntry> conv2d_forward_kernels();
std::span<const ops::Conv2dEntry> conv2d_backward_data_kernels();
std::span<const ops::Conv2dEntry> conv2d_backward_weight_kernels();

}  // namespace ampkit::cpu
