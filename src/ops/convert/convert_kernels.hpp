// The bulk-conversion kernels (kernels layer, internal): the validated problem, one kernel per
// ISA and the kernel list, best first, reference last. Read by src/ops/convert (dispatch,
// kernel_name, kernel_statuses) and by the tests (every entry vs the reference).
#pragma once

#include <cstdint>
#include <span>

#include "ampkit/core/dtype.hpp"
#include "ampkit/device/cpu.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

/// A conversion after validation: n >= 0 elements, src and dst not overlapping (or identical
/// with from == to), both non-null when n > 0.
struct ConvertProblem {
  const void* src = nullptr;
  DType from = DType::f32;
  void* dst = nullptr;
  DType to = DType::f32;
  std::int64_t n = 0;
  Device device = Device::cpu;  // every pointer is memory of this device (cuda: device_index)
  int device_index = 0;
};

/// Converts p.n elements from p.src (dtype p.from) to p.dst (dtype p.to); any pair of
/// f32/bf16/f16. The entry takes the whole problem, so a GPU entry knows its device.
using ConvertFn = void (*)(const ConvertProblem& p);
using ConvertEntry = ops::KernelEntry<ConvertProblem, ConvertFn>;

}  // namespace ampkit::ops

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
