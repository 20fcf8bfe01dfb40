// Memory of the `ampkit bench` and `check` subcommands (tools layer, common/): aligned pre-touched
// buffers (transparent huge pages for large ones), the memory available now, the up-front fit
// check. See memory.hpp.
#include "tools/ampkit/common/memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "ampkit/core/error.hpp"

namespace ampkit::tools {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kPage = 4096;

}  // namespace

AlignedBuffer::AlignedBuffer(std::size_t bytes, int threads) {
  if (threads < 1) fail("AlignedBuffer", "threads must be >= 1, but got ", threads);
  // Large buffers are 2 MiB aligned and advised to use transparent huge pages (the machine's
  // setting is "madvise"): fewer page faults to pre-touch and fewer TLB misses, as a training
  // runtime's memory pool would have. The alignment the kernels see is 64 bytes either way.
  const bool huge = bytes >= kHugePage;
  const std::size_t align = huge ? kHugePage : 64;
  if (bytes > SIZE_MAX - align)
    fail_with(ErrorKind::out_of_memory, "AlignedBuffer", "cannot allocate ", bytes, " bytes");
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + align - 1) / align * align;
  data_ = std::aligned_alloc(align, rounded);
  if (data_ == nullptr)
    fail_with(ErrorKind::out_of_memory, "AlignedBuffer", "cannot allocate ", bytes, " bytes (",
              format_bytes(static_cast<double>(bytes)), ")");
  bytes_ = bytes;
  if (huge) madvise(data_, rounded, MADV_HUGEPAGE);  // advice only; failure is harmless
  // First touch: pages in a static schedule, as the kernels split their rows.
  auto* p = static_cast<unsigned char*>(data_);
  const auto pages = static_cast<std::int64_t>((rounded + kPage - 1) / kPage);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t i = 0; i < pages; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * kPage;
    std::memset(p + at, 0, std::min(kPage, rounded - at));
  }
}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    std::free(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

AlignedBuffer::~AlignedBuffer() { std::free(data_); }

std::size_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string name;
  std::size_t kib = 0;
  std::string unit;
  while (in >> name >> kib >> unit)
    if (name == "MemAvailable:") return kib * 1024;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

void require_memory(const char* context, std::string_view what, double need_bytes, double reserve_bytes) {
  const auto available = static_cast<double>(available_memory_bytes());
  if (available <= 0.0 || need_bytes + reserve_bytes <= available) return;
  fail_with(ErrorKind::out_of_memory, context, what, " needs ", format_bytes(need_bytes), " of buffers",
            reserve_bytes > 0.0 ? " (plus " + format_bytes(reserve_bytes) + " to spare)" : std::string(), ", but ",
            format_bytes(available), " are available now (MemAvailable)");
}

std::string format_bytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 6) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return text;
}

}  // namespace ampkit::tools
