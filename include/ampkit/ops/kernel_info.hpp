// What the kernel registry says about one call (ops layer): every kernel of the op's list, best
// first, with the reason it declines the call, and which one would run. Returned by each op's
// *_kernel_statuses query and printed by `ampkit info --kernels`.
#pragma once

#include <string>

namespace ampkit {

struct KernelStatus {
  std::string name;      // e.g. "gemm_ukernel_bf16_32x12_avx512bf16"
  std::string declined;  // empty when the kernel takes the call; otherwise why it does not
  bool selected = false; // the kernel the call would run (the first that takes it)
};

}  // namespace ampkit
