// Bulk dtype conversion between f32, bf16 and f16 (ops layer): vectorized (F16C, AVX-512,
// AVX512_BF16) with a scalar reference; every path rounds to nearest even and gives the same
// bits as float16.hpp. Two forms: raw pointers with an element count, and TensorViews.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/kernel_info.hpp"

namespace ampkit {

/// dst[i] = convert(src[i]) for i < n. src_type, dst_type: f32, bf16 or f16. src and dst must
/// not overlap unless identical with the same dtype (then nothing is done). Throws Error on an
/// invalid dtype, n < 0, null pointers with n > 0, a byte size that overflows int64, or partial
/// overlap; nothing is written then.
void convert(const void* src, DType src_type, void* dst, DType dst_type, std::int64_t n);

/// dst = src converted to dst's dtype. src, dst: present views of f32/bf16/f16, row-major
/// contiguous, the same shape, both in cpu memory or both in device memory of one GPU (the CUDA
/// list runs it then). Throws Error like the pointer form and when the shapes differ.
void convert(const TensorView& src, const TensorView& dst);

/// Empty when convert(src, dst) would run; otherwise the message it would throw. Never throws.
std::string convert_check(const TensorView& src, const TensorView& dst) noexcept;
/// Stage 1 of the check above, memory-free (the descriptor check): the same rules over presence,
/// rank, shapes, strides, dtypes, device and attributes, with every view's data ignored (it may be
/// null; nothing is read or looked up) — what the graph verifier asks of a node before memory
/// exists. The memory rules (data given, device memory, overlap) are stage 2, checked only by the
/// call and the check above. "" or the message the call would throw. Never throws.
std::string convert_descriptor_check(const TensorView& src, const TensorView& dst) noexcept;

/// The kernel convert(src, dst) would use now (given AMPKIT_ISA and the machine), e.g.
/// "convert_avx512bf16", or "convert_copy" for equal dtypes. Throws like convert.
const char* convert_kernel_name(const TensorView& src, const TensorView& dst);

/// Every kernel of the conversion list, best first, with the reason it declines the call (empty
/// when it takes it) and the one the call would use marked. Throws like convert.
std::vector<KernelStatus> convert_kernel_statuses(const TensorView& src, const TensorView& dst);

}  // namespace ampkit
