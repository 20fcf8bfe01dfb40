// What the kernel registry says about one call (ops layer): every kernel of the op's list, best
// first, with the reason it declines the call, and which one would run. Returned by each op's
// *_kernel_statuses query and printed by `ampkit info --kernels`.
#pragma once

#include <string>
#include <vector>

#include "ampkit/core/tensor.hpp"

namespace ampkit {

struct KernelStatus {
  std::string name;       // e.g. "gemm_ukernel_bf16_32x12_avx512bf16"
  std::string declined;   // empty when the kernel takes the call; otherwise why it does not
  bool selected = false;  // the kernel the call would run (the first that takes it)
};

/// One op's kernel list for one device as the machine sees it now, without a problem: every entry, best first,
/// with why it cannot run here ("needs AVX512_BF16, which this machine lacks", "capped by
/// AMPKIT_ISA ..."; empty when it can). Entries that also decline problems (gemm's skinny and
/// bf16 engines) say so per call through that op's *_kernel_statuses query.
struct KernelList {
  std::string op;               // "gemm", "layer_norm_forward", "attention_backward", ...
  Device device = Device::cpu;  // every list ends in its reference entry
  std::vector<KernelStatus> kernels;
};

/// Runs every op on the reference entry of its kernel list (plain loops, double accumulation,
/// one rounding to each output: the oracle every fast kernel is tested against) when `on`, for
/// the whole process, until called again with false. For checking results, not for speed:
/// `ampkit check kernels` compares each kernel with it. AMPKIT_ISA=ref / set_isa_cap(Isa::ref)
/// is not the same thing: it caps the instruction set, and the portable fast kernels (GELU,
/// elementwise, attention, embedding, optimizers, softmax cross-entropy) still run under it.
/// The *_kernel_name queries and *_kernel_statuses follow the switch. Thread-safe (an atomic
/// read once per call); never throws.
void set_reference_kernels(bool on) noexcept;
/// Whether set_reference_kernels(true) is in force.
bool reference_kernels() noexcept;

/// Every op's CPU kernel list, then the CUDA lists (gemm and the norms; in a build without the
/// CUDA backend, or without a usable GPU, their entries say why they cannot run). The one
/// registry the graph's op table and `ampkit info --kernels` read.
std::vector<KernelList> kernel_lists();

}  // namespace ampkit
