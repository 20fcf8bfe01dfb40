// Memory of the `ampkit bench` and `check` subcommands (tools layer, common/): 64-byte-aligned
// pre-touched buffers, the memory available now, and the up-front check that a run's buffers fit
// in it (so an oversized request fails at once instead of after minutes of allocation).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace ampkit::tools {

/// A 64-byte-aligned byte buffer allocated once and pre-touched: zero-filled in an OpenMP
/// parallel loop with a static schedule over `threads` threads, so its pages exist (and are
/// placed) before anything is timed. Move-only.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  /// Throws Error (out_of_memory) when the allocation fails.
  AlignedBuffer(std::size_t bytes, int threads);
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  ~AlignedBuffer();

  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T>
  T* as() {
    return static_cast<T*>(data_);
  }
  std::size_t size() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

/// MemAvailable from /proc/meminfo in bytes; sysconf(_SC_AVPHYS_PAGES) pages when that cannot
/// be read; 0 when neither can.
std::size_t available_memory_bytes();

/// Throws Error of kind out_of_memory, "<context>: <what> needs 3.6 TiB of buffers, but 120.5 GiB
/// are available now", when `need_bytes` plus `reserve_bytes` exceeds the memory available now.
/// Nothing when the available memory cannot be read.
void require_memory(const char* context, std::string_view what, double need_bytes, double reserve_bytes = 0.0);

/// "512 B", "1.5 MiB", "3.6 TiB".
std::string format_bytes(double bytes);

}  // namespace ampkit::tools
