// Helpers shared by the optimizer tests (adamw_sgd_test.cpp, optimizer_bad_input_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include "core/element.hpp"
#include "ops/elementwise/op_test_support.hpp"

namespace ampkit::ops_testing {

inline float* f32(Buffer& b) { return static_cast<float*>(b.data()); }

// param_copy must be the stored f32 param rounded once to its dtype, bit for bit.
inline ::testing::AssertionResult copy_is_rounded_param(const Buffer& param, const Buffer& copy) {
  Buffer want(copy.dtype, param.size());
  for (std::int64_t i = 0; i < param.size(); ++i)
    cpu::store_element(want.data(), copy.dtype, i, static_cast<const float*>(param.data())[i]);
  return same_bytes("param_copy", copy, want);
}

}  // namespace ampkit::ops_testing
