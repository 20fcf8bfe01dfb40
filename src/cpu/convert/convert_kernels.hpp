// The bulk-conversion kernel list (core layer, internal): one entry per ISA, best first,
// reference last. Read by convert.cpp (dispatch) and by the tests (every entry vs reference).
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/device/cpu.hpp"
#include "ampkit/core/dtype.hpp"
#include "cpu/common/kernel_select.hpp"

namespace ampkit::cpu {

/// Converts n elements from `src` (dtype from) to `dst` (dtype to). from != to.
using ConvertFn = void (*)(const void* src, DType from, void* dst, DType to, std::int64_t n);

struct ConvertKernel {
  const char* name;
  Isa isa;
  bool needs_bf16_instructions;
  ConvertFn run;
};

void convert_ref(const void* src, DType from, void* dst, DType to, std::int64_t n);
void convert_avx2(const void* src, DType from, void* dst, DType to, std::int64_t n);
void convert_avx512(const void* src, DType from, void* dst, DType to, std::int64_t n);
void convert_avx512bf16(const void* src, DType from, void* dst, DType to, std::int64_t n);

/// All conversion kernels, best first, the reference last.
std::span<const ConvertKernel> convert_kernels();

}  // namespace ampkit::cpu
