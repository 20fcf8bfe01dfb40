// The bulk-conversion kernels of the CPU backend (kernels layer, internal): the kernel entry points
// of every ISA and the kernel lists, best first, reference last, over the neutral problem of
// src/ops/convert/convert_kernels.hpp. Defined in src/cpu/convert/; the CPU backend
// (src/cpu/common/cpu_backend.cpp) puts the lists in its row of the op table; the tests run each
// entry. Mirrors src/cuda/<op>/*_cuda.hpp.
#pragma once

#include <cstdint>
#include <span>

#include "ops/convert/convert_kernels.hpp"

namespace ampkit::cpu {

void convert_copy(const void* src, DType from, void* dst, DType to, std::int64_t n);
void convert_ref(const void* src, DType from, void* dst, DType to, std::int64_t n);
void convert_avx2(const void* src, DType from, void* dst, DType to, std::int64_t n);
void convert_avx512(const void* src, DType from, void* dst, DType to, std::int64_t n);
void convert_avx512bf16(const void* src, DType from, void* dst, DType to, std::int64_t n);

/// The conversion kernels, best first, the reference last (convert_kernel_list.cpp). The first
/// entry, convert_copy, takes only equal dtypes (a byte copy).
std::span<const ops::ConvertEntry> convert_kernels();

}  // namespace ampkit::cpu
