// The LayerNorm/RMSNorm kernel lists (kernels layer): one per operation, best first, reference
// last, each entry with what it needs from the machine. Read by src/ops/norm and the tests.
#include "cpu/norm/norm_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr ops::KernelNeeds kAvx512Bf16{Device::cpu, Isa::avx512, true};
constexpr ops::KernelNeeds kAvx512{Device::cpu, Isa::avx512, false};
constexpr ops::KernelNeeds kAvx2{Device::cpu, Isa::avx2, false};
constexpr ops::KernelNeeds kRef{Device::cpu, Isa::ref, false};

}  // namespace

std::span<const ops::NormForwardEntry> layer_norm_fwd_kernels() {
  static const ops::NormForwardEntry list[] = {
      {"layer_norm_fwd_avx512bf16", kAvx512Bf16, nullptr, layer_norm_fwd_avx512bf16},
      {"layer_norm_fwd_avx512", kAvx512, nullptr, layer_norm_fwd_avx512},
      {"layer_norm_fwd_avx2", kAvx2, nullptr, layer_norm_fwd_avx2},
      {"layer_norm_fwd_ref", kRef, nullptr, layer_norm_fwd_ref},
  };
  return list;
}

std::span<const ops::NormBackwardEntry> layer_norm_bwd_kernels() {
  static const ops::NormBackwardEntry list[] = {
      {"layer_norm_bwd_avx512bf16", kAvx512Bf16, nullptr, layer_norm_bwd_avx512bf16},
      {"layer_norm_bwd_avx512", kAvx512, nullptr, layer_norm_bwd_avx512},
      {"layer_norm_bwd_avx2", kAvx2, nullptr, layer_norm_bwd_avx2},
      {"layer_norm_bwd_ref", kRef, nullptr, layer_norm_bwd_ref},
  };
  return list;
}

std::span<const ops::NormForwardEntry> rms_norm_fwd_kernels() {
  static const ops::NormForwardEntry list[] = {
      {"rms_norm_fwd_avx512bf16", kAvx512Bf16, nullptr, rms_norm_fwd_avx512bf16},
      {"rms_norm_fwd_avx512", kAvx512, nullptr, rms_norm_fwd_avx512},
      {"rms_norm_fwd_avx2", kAvx2, nullptr, rms_norm_fwd_avx2},
      {"rms_norm_fwd_ref", kRef, nullptr, rms_norm_fwd_ref},
  };
  return list;
}

std::span<const ops::NormBackwardEntry> rms_norm_bwd_kernels() {
  static const ops::NormBackwardEntry list[] = {
      {"rms_norm_bwd_avx512bf16", kAvx512Bf16, nullptr, rms_norm_bwd_avx512bf16},
      {"rms_norm_bwd_avx512", kAvx512, nullptr, rms_norm_bwd_avx512},
      {"rms_norm_bwd_avx2", kAvx2, nullptr, rms_norm_bwd_avx2},
      {"rms_norm_bwd_ref", kRef, nullptr, rms_norm_bwd_ref},
  };
  return list;
}

}  // namespace ampkit::cpu
