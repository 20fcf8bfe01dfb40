// Cache-size detection (core layer): the L1d, L2 and L3 that core 0 sees, for the GEMM blocking
// (src/cpu/gemm/gemm_blocking.cpp). sysfs first (what the kernel found, also right under a
// hypervisor that reports its own topology), CPUID deterministic cache parameters second (leaf 4
// on Intel, 0x8000001D on AMD), CpuCaches' conservative defaults last. Called once.
#include "cpu/common/cpu_caches.hpp"

#include <cpuid.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "ampkit/core/error.hpp"

namespace ampkit {
namespace {

// "48K", "2048K", "105M", "12345" -> bytes; -1 when malformed or not positive.
std::int64_t parse_size(std::string_view t) {
  if (t.empty()) return -1;
  std::int64_t scale = 1;
  const char last = t.back();
  if (last == 'K' || last == 'k') scale = 1024;
  if (last == 'M' || last == 'm') scale = 1024 * 1024;
  if (last == 'G' || last == 'g') scale = 1024 * 1024 * 1024;
  if (scale != 1) t.remove_suffix(1);
  if (t.empty() || t.size() > 12) return -1;
  std::int64_t v = 0;
  for (const char c : t) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  std::int64_t bytes = 0;
  if (v <= 0 || __builtin_mul_overflow(v, scale, &bytes)) return -1;  // "999999999999G" must not wrap
  return bytes;
}

// "0-1,4,6-7" -> 5 (0 when malformed).
int count_cpu_list(std::string_view t) {
  int count = 0;
  while (!t.empty()) {
    const std::size_t comma = t.find(',');
    const std::string_view part = t.substr(0, comma);
    const std::size_t dash = part.find('-');
    const int lo = std::atoi(std::string(part.substr(0, dash)).c_str());
    const int hi = dash == std::string_view::npos ? lo : std::atoi(std::string(part.substr(dash + 1)).c_str());
    if (hi < lo) return 0;
    count += hi - lo + 1;
    if (comma == std::string_view::npos) break;
    t.remove_prefix(comma + 1);
  }
  return count;
}

bool read_line(const std::string& path, std::string& out) {
  std::ifstream f(path);
  return static_cast<bool>(std::getline(f, out));
}

bool from_sysfs(CpuCaches& c) {
  bool l1 = false, l2 = false;
  for (int i = 0; i < 16; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string level, type, size, shared;
    if (!read_line(dir + "level", level) || !read_line(dir + "type", type) || !read_line(dir + "size", size)) break;
    const std::int64_t bytes = parse_size(size);
    if (bytes <= 0 || type == "Instruction") continue;
    const int sharing = read_line(dir + "shared_cpu_list", shared) ? count_cpu_list(shared) : 0;
    if (level == "1") c.l1d = bytes, l1 = true;
    if (level == "2") c.l2 = bytes, c.l2_sharing = sharing > 0 ? sharing : 1, l2 = true;
    if (level == "3") c.l3 = bytes, c.l3_sharing = sharing > 0 ? sharing : 1;
  }
  return l1 && l2;
}

bool from_cpuid(CpuCaches& c) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amd = ebx == 0x68747541u;  // "Auth"enticAMD
  unsigned leaf = 4;
  if (amd) {
    if (__get_cpuid_max(0x80000000u, nullptr) < 0x8000001Du) return false;
    leaf = 0x8000001Du;
  } else if (eax < 4) {
    return false;
  }
  bool l1 = false, l2 = false;
  for (unsigned sub = 0; sub < 16; ++sub) {
    __cpuid_count(leaf, sub, eax, ebx, ecx, edx);
    const unsigned type = eax & 0x1f, level = (eax >> 5) & 0x7;
    if (type == 0) break;
    if (type == 2) continue;  // instruction cache
    const std::int64_t bytes = static_cast<std::int64_t>((ebx >> 22) + 1) * (((ebx >> 12) & 0x3ff) + 1) *
                               ((ebx & 0xfff) + 1) * (static_cast<std::int64_t>(ecx) + 1);
    const int sharing = static_cast<int>(((eax >> 14) & 0xfff) + 1);
    if (level == 1) c.l1d = bytes, l1 = true;
    if (level == 2) c.l2 = bytes, c.l2_sharing = sharing, l2 = true;
    if (level == 3) c.l3 = bytes, c.l3_sharing = sharing;
  }
  return l1 && l2;
}

}  // namespace

void apply_cache_override(std::string_view text, CpuCaches& caches) {
  CpuCaches c = caches;
  std::string_view t = text;
  while (!t.empty()) {
    const std::size_t comma = t.find(',');
    const std::string_view item = t.substr(0, comma);
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::int64_t bytes = eq == std::string_view::npos ? -1 : parse_size(item.substr(eq + 1));
    std::int64_t* slot = key == "l1d" ? &c.l1d : key == "l2" ? &c.l2 : key == "l3" ? &c.l3 : nullptr;
    if (slot == nullptr || bytes <= 0)
      fail("AMPKIT_CACHES", "expected a list like 'l1d=48K,l2=2M,l3=105M' (keys l1d, l2, l3; sizes > 0 with an ",
           "optional K/M/G suffix), but got '", std::string(text), "'");
    *slot = bytes;
    if (comma == std::string_view::npos) break;
    t.remove_prefix(comma + 1);
  }
  c.source = "AMPKIT_CACHES";
  caches = c;
}

CpuCaches detect_cpu_caches() {
  CpuCaches c;
  if (CpuCaches s; from_sysfs(s)) {
    c = s, c.source = "sysfs";
  } else if (CpuCaches s2; from_cpuid(s2)) {
    c = s2, c.source = "cpuid";
  }
  const char* env = std::getenv("AMPKIT_CACHES");
  if (env != nullptr && *env != '\0') apply_cache_override(env, c);
  return c;
}

}  // namespace ampkit
