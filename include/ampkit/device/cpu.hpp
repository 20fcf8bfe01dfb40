// CPU features and the ISA cap (core layer).
// Features are detected once (CPUID plus the OS's XGETBV state check). AMPKIT_ISA=ref|avx2|avx512|amx
// caps what the kernels may use; asking for an ISA the machine lacks is an Error, never a silent
// downgrade. Kernels choose once per call, never per tile.
#pragma once

#include <cstdint>
#include <string_view>

namespace ampkit {

/// Instruction-set levels, ordered: each includes the ones before it.
enum class Isa : int {
  ref = 0,     // portable C++, no ISA-specific code
  avx2 = 1,    // AVX2 + FMA + F16C
  avx512 = 2,  // AVX-512 F/BW/DQ/VL (+ AVX512_BF16 where CpuFeatures says so)
  amx = 3,     // the above + AVX512_BF16 + AMX-BF16 tiles (the OS must also grant tile data)
};

/// "ref", "avx2", "avx512" or "amx".
std::string_view isa_name(Isa isa);
/// Parses an ISA name; throws Error naming `what` on anything else.
Isa parse_isa(std::string_view text, const char* what);

/// The data caches one core sees (detected once, see cpu_features()): sysfs
/// (/sys/devices/system/cpu/cpu0/cache), else CPUID (leaf 4 on Intel, 0x8000001D on AMD), else
/// conservative defaults (32 KiB, 1 MiB, 8 MiB). AMPKIT_CACHES="l1d=48K,l2=2M,l3=105M" (any
/// subset; K/M suffixes) overrides the sizes for experiments; a malformed value is an Error.
struct CpuCaches {
  std::int64_t l1d = 32 * 1024;       // bytes, per core
  std::int64_t l2 = 1024 * 1024;      // bytes, of the level-2 cache of core 0
  std::int64_t l3 = 8 * 1024 * 1024;  // bytes, the whole level-3 cache of core 0 (0: none)
  int l2_sharing = 1;                 // logical CPUs that share that L2
  int l3_sharing = 1;                 // logical CPUs that share that L3
  const char* source = "default";     // "sysfs", "cpuid", "default", or "AMPKIT_CACHES" when overridden
};

/// What the machine and the OS support (detected once).
struct CpuFeatures {
  bool avx2 = false;    // AVX2 + FMA + F16C, with YMM state enabled by the OS
  bool avx512 = false;  // AVX-512 F/BW/DQ/VL, with ZMM state enabled by the OS
  bool avx512bf16 = false;
  bool avx512fp16 = false;
  // AMX-BF16 + AMX-TILE (CPUID 7.0 EDX bits 22, 24) with AVX512_BF16, and XCR0 bits 17-18 (the
  // OS saves tile state). Linux also wants a per-process request before the first tile
  // instruction: see amx_tile_data_permitted().
  bool amx_bf16 = false;
  CpuCaches caches;
  Isa best() const { return amx_bf16 ? Isa::amx : avx512 ? Isa::avx512 : avx2 ? Isa::avx2 : Isa::ref; }
};
const CpuFeatures& cpu_features();

/// Asks the OS for the AMX tile-data permission (Linux: arch_prctl(ARCH_REQ_XCOMP_PERM,
/// XFEATURE_XTILEDATA)) once per process, on the first call, and returns whether it was granted
/// (false without amx_bf16). Thread-safe; later calls return the remembered answer.
bool amx_tile_data_permitted();

/// The ISA kernels may use: AMPKIT_ISA (read at first use) or set_isa_cap, else the best the
/// machine has. Throws Error when AMPKIT_ISA is not a valid name or above what the machine has.
Isa active_isa();
/// Caps the ISA for this process; throws Error if `isa` exceeds what the machine has.
void set_isa_cap(Isa isa);
/// True when the active ISA is at least `isa` and, for bf16 dot products, the machine has them.
bool isa_enabled(Isa isa);
/// True when AVX512_BF16 instructions may be used (avx512 active and present).
bool bf16_dot_enabled();

}  // namespace ampkit
