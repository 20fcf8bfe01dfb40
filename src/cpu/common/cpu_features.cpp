// CPU feature detection (CPUID + XGETBV; caches: cpu_caches.cpp) and the AMPKIT_ISA cap (core layer).
// Called by every kernel family's dispatcher, once per call.
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cpu.hpp"
#include "cpu/common/cpu_caches.hpp"

namespace ampkit {
namespace {

std::uint64_t read_xcr0() {
  std::uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<std::uint64_t>(edx) << 32) | eax;
}

CpuFeatures detect_isa() {
  CpuFeatures f;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
  const bool fma = ecx & (1u << 12), osxsave = ecx & (1u << 27), avx = ecx & (1u << 28), f16c = ecx & (1u << 29);
  if (!osxsave || !avx) return f;
  const std::uint64_t xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;
  if (__get_cpuid_max(0, nullptr) < 7) return f;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const bool avx2 = ebx & (1u << 5), avx512f = ebx & (1u << 16), avx512dq = ebx & (1u << 17),
             avx512bw = ebx & (1u << 30), avx512vl = ebx & (1u << 31);
  const bool avx512fp16 = edx & (1u << 23);
  const bool amx_bf16 = edx & (1u << 22), amx_tile = edx & (1u << 24);
  const bool tile_state = (xcr0 & (3u << 17)) == (3u << 17);  // XTILECFG + XTILEDATA
  const unsigned leaf7_subleaves = eax;
  bool avx512bf16 = false;
  if (leaf7_subleaves >= 1) {
    __cpuid_count(7, 1, eax, ebx, ecx, edx);
    avx512bf16 = eax & (1u << 5);
  }
  f.avx2 = ymm_state && avx2 && fma && f16c;
  f.avx512 = f.avx2 && zmm_state && avx512f && avx512dq && avx512bw && avx512vl;
  f.avx512bf16 = f.avx512 && avx512bf16;
  f.avx512fp16 = f.avx512 && avx512fp16;
  f.amx_bf16 = f.avx512bf16 && amx_bf16 && amx_tile && tile_state;
  return f;
}

std::atomic<int> g_isa_cap{-1};  // -1: not yet decided
std::once_flag g_env_once;

void check_supported(Isa isa, const char* what) {
  const Isa best = cpu_features().best();
  if (static_cast<int>(isa) > static_cast<int>(best))
    fail(what, "ISA '", isa_name(isa), "' is not supported by this machine (best available: '", isa_name(best), "')");
}

}  // namespace

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::ref: return "ref";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::amx: return "amx";
  }
  return "?";
}

Isa parse_isa(std::string_view text, const char* what) {
  if (text == "ref") return Isa::ref;
  if (text == "avx2") return Isa::avx2;
  if (text == "avx512") return Isa::avx512;
  if (text == "amx") return Isa::amx;
  fail(what, "expected one of ref, avx2, avx512, amx, but got '", std::string(text), "'");
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = [] {
    CpuFeatures f = detect_isa();
    f.caches = detect_cpu_caches();
    return f;
  }();
  return features;
}

bool amx_tile_data_permitted() {
  // XCR0 says the kernel saves tile state; Linux still faults the first tile-data instruction
  // of a process that did not ask for it (the state is large: 8 KiB per thread's signal frame).
  static const bool granted = [] {
    if (!cpu_features().amx_bf16) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
}

Isa active_isa() {
  std::call_once(g_env_once, [] {
    if (g_isa_cap.load() >= 0) return;  // set_isa_cap came first
    const char* env = std::getenv("AMPKIT_ISA");
    if (env == nullptr || *env == '\0') {
      g_isa_cap.store(static_cast<int>(cpu_features().best()));
      return;
    }
    const Isa isa = parse_isa(env, "AMPKIT_ISA");
    check_supported(isa, "AMPKIT_ISA");
    g_isa_cap.store(static_cast<int>(isa));
  });
  const int cap = g_isa_cap.load();
  if (cap < 0) fail("AMPKIT_ISA", "the ISA cap could not be determined");
  return static_cast<Isa>(cap);
}

void set_isa_cap(Isa isa) {
  if (isa != Isa::ref && isa != Isa::avx2 && isa != Isa::avx512 && isa != Isa::amx)
    fail("set_isa_cap", "isa must be ref, avx2, avx512 or amx, but got the value ", static_cast<int>(isa));
  check_supported(isa, "set_isa_cap");
  g_isa_cap.store(static_cast<int>(isa));
}

bool isa_enabled(Isa isa) { return static_cast<int>(active_isa()) >= static_cast<int>(isa); }

bool bf16_dot_enabled() { return isa_enabled(Isa::avx512) && cpu_features().avx512bf16; }

}  // namespace ampkit
