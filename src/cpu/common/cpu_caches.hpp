// Cache-size detection (core layer, internal): called once by cpu_features() (cpu_features.cpp).
#pragma once

#include <string_view>

#include "ampkit/device/cpu.hpp"

namespace ampkit {

/// The caches of core 0: sysfs, else CPUID, else CpuCaches' defaults; then AMPKIT_CACHES.
CpuCaches detect_cpu_caches();

/// Applies an AMPKIT_CACHES value ("l1d=48K,l2=2M,l3=105M", any subset, sizes in bytes with an
/// optional K/M/G suffix) to `caches`; throws Error naming AMPKIT_CACHES on anything else.
void apply_cache_override(std::string_view text, CpuCaches& caches);

}  // namespace ampkit
