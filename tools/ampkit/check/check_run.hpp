// How a case of `ampkit check kernels` runs (tools layer, check/): once with every op on the
// reference entry of its kernel list (set_reference_kernels, at the ref ISA cap) and once at the
// ISA under test, each on its own copy of the inputs; the name of the kernel that ran; views of
// check buffers; the dtype lists the families sweep. Used by every *_check.cpp.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "tools/ampkit/check/check_tensor.hpp"

namespace ampkit::tools::check {

inline constexpr DType kFloatDTypes[] = {DType::f32, DType::bf16, DType::f16};

/// Runs fn() with every op on its reference kernel; restores the switch even when fn throws.
template <class Fn>
void run_reference(Fn&& fn) {
  struct Restore {
    ~Restore() { set_reference_kernels(false); }
  } restore;
  set_isa_cap(Isa::ref);
  set_reference_kernels(true);
  fn();
}

/// Runs fn() with the kernels the ISA `isa` selects.
template <class Fn>
void run_at(Isa isa, Fn&& fn) {
  set_reference_kernels(false);
  set_isa_cap(isa);
  fn();
}

/// The kernel the op's list selects now, for the ops without a *_kernel_name query (their entries
/// decline no problem, so the machine and the ISA cap decide): the first available entry of the
/// kernel_lists() list whose op name starts with `op`.
inline std::string listed_kernel(std::string_view op) {
  for (const KernelList& list : kernel_lists())
    if (std::string_view(list.op).substr(0, op.size()) == op)
      for (const KernelStatus& k : list.kernels)
        if (k.selected) return k.name;
  return "(no kernel listed for " + std::string(op) + ")";
}

/// A row-major contiguous view of t.
inline TensorView view(CheckTensor& t, std::initializer_list<std::int64_t> shape) {
  return TensorView(t.data(), t.dtype, shape);
}
inline TensorView view(const CheckTensor& t, std::initializer_list<std::int64_t> shape) {
  return TensorView(t.data(), t.dtype, shape);
}

/// "f32", "bf16", "f16".
inline std::string name(DType t) { return std::string(dtype_name(t)); }

}  // namespace ampkit::tools::check
