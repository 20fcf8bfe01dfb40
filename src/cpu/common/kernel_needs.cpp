// Whether a CPU kernel-list entry can run on this machine under the ISA cap, and why not
// (device layer: the CPU half of ops::kernel_unavailable_reason; CUDA entries ask the CUDA backend).
#include "ampkit/device/cpu.hpp"
#include "ops/backend.hpp"
#include "ops/kernel_registry.hpp"

namespace ampkit::ops {

const char* kernel_unavailable_reason(const KernelNeeds& needs) {
  if (needs.device == Device::cuda) return backend(Device::cuda).unavailable();  // the CUDA backend says why not
  if (needs.device != Device::cpu) return "no backend for this device in this build";
  const CpuFeatures& f = cpu_features();
  const bool machine_has = needs.isa == Isa::ref || (needs.isa == Isa::avx2 && f.avx2) ||
                           (needs.isa == Isa::avx512 && f.avx512) || (needs.isa == Isa::amx && f.amx_bf16);
  if (!machine_has) {
    switch (needs.isa) {
      case Isa::amx: return "needs AMX-BF16 (amx_bf16, amx_tile), which this machine lacks";
      case Isa::avx512: return "needs AVX-512 F/BW/DQ/VL, which this machine lacks";
      default: return "needs AVX2 + FMA + F16C, which this machine lacks";
    }
  }
  if (needs.bf16_dot && !f.avx512bf16) return "needs AVX512_BF16, which this machine lacks";
  if (!isa_enabled(needs.isa)) {
    switch (needs.isa) {
      case Isa::amx: return "capped: AMPKIT_ISA / set_isa_cap is below amx";
      case Isa::avx512: return "capped: AMPKIT_ISA / set_isa_cap is below avx512";
      default: return "capped: AMPKIT_ISA / set_isa_cap is ref";
    }
  }
  // Asked only once an AMX entry could run: a capped process never requests the tile state.
  if (needs.isa == Isa::amx && !amx_tile_data_permitted())
    return "the OS refused the AMX tile-data permission (arch_prctl)";
  return nullptr;
}

}  // namespace ampkit::ops
