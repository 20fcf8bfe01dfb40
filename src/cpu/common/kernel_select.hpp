// Choosing a kernel from a family's list (core layer, internal): the first entry, best first,
// whose ISA the cap allows and whose instructions the machine has.
#pragma once

#include "ampkit/device/cpu.hpp"

namespace ampkit::cpu {

/// True when a kernel built for `isa` (and needing AVX512_BF16 if said so) may run now.
inline bool kernel_usable(Isa isa, bool needs_bf16_instructions) {
  return isa_enabled(isa) && (!needs_bf16_instructions || bf16_dot_enabled());
}

}  // namespace ampkit::cpu
