// Bulk dtype conversion (core layer): vectorized (F16C, AVX-512, AVX512_BF16) with a scalar
// reference; every path rounds to nearest even and gives the same bits as float16.hpp.
#pragma once

#include <cstdint>

#include "ampkit/core/dtype.hpp"

namespace ampkit {

/// dst[i] = convert(src[i]) for i < n. src and dst must not overlap unless identical with the
/// same dtype. Throws Error on null pointers with n > 0, n < 0, or partial overlap.
void convert(const void* src, DType src_type, void* dst, DType dst_type, std::int64_t n);

}  // namespace ampkit
