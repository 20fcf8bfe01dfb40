// The causal attention op's internal interface (ops layer): the validated problems the front end
// hands to a kernel, the kernel lists (declared here, defined by the CPU layer in
// src/cpu/attention/attention_kernel_list.cpp, so the front end never includes a CPU header), and
// the validation that decodes the public args into a problem (attention_validate.cpp). Read by
// the front end, the CPU kernels and the tests.
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/attention.hpp"
#include "ops/check_stage.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// A [batch, seq, heads * head_dim] operand after validation: element (b, i, c) is at element
/// offset b * batch_stride + i * row_stride + c from data (last dim contiguous). Head h is the
/// columns [h * head_dim, (h + 1) * head_dim). A stride of a dim of size 1 is never used.
struct AttentionInput {
  const void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t batch_stride = 0;
  std::int64_t row_stride = 0;
};
/// An output operand: as AttentionInput, and no two elements share memory. data null: absent.
struct AttentionOutput {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t batch_stride = 0;
  std::int64_t row_stride = 0;
};

/// A forward call after validation: batch, seq >= 0; heads, head_dim >= 1; scale finite, > 0
/// (the default 1/sqrt(head_dim) already resolved, rounded to float). out and lse overlap no
/// operand; q, k, v may overlap each other. lse: [batch, heads, seq] f32, contiguous.
struct AttentionForwardProblem {
  std::int64_t batch = 0, seq = 0, heads = 1, head_dim = 1;
  float scale = 1.0f;
  AttentionInput q, k, v;
  AttentionOutput out;
  float* lse = nullptr;
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
};

/// A backward call after validation: as the forward; dq/dk/dv absent (data null) or disjoint from
/// every input and from each other (exact test: they may be interleaved column slices of one
/// packed buffer). With accumulate, each present output gets += instead of =.
struct AttentionBackwardProblem {
  std::int64_t batch = 0, seq = 0, heads = 1, head_dim = 1;
  float scale = 1.0f;
  AttentionInput q, k, v, out, dout;
  const float* lse = nullptr;
  AttentionOutput dq, dk, dv;
  bool accumulate = false;
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
};

using AttentionForwardFn = void (*)(const AttentionForwardProblem&);
using AttentionBackwardFn = void (*)(const AttentionBackwardProblem&);
using AttentionForwardEntry = KernelEntry<AttentionForwardProblem, AttentionForwardFn>;
using AttentionBackwardEntry = KernelEntry<AttentionBackwardProblem, AttentionBackwardFn>;

/// Validates a call and decodes it into a problem. Throws Error naming "attention_forward" /
/// "attention_backward" and the argument. Reads no element of any operand.
AttentionForwardProblem validate_attention_forward(const AttentionForwardArgs& args, Stage stage = Stage::call);
AttentionBackwardProblem validate_attention_backward(const AttentionBackwardArgs& args, Stage stage = Stage::call);

/// The kernel lists, best first, reference last (defined in src/cpu/attention/).
std::span<const AttentionForwardEntry> attention_forward_kernels();
std::span<const AttentionBackwardEntry> attention_backward_kernels();

}  // namespace ampkit::ops
