// Per-thread fp32 scratch of the attention kernels (kernels layer): one block of `threads` slices,
// allocated on the calling thread so that a failed allocation reaches the caller as an Error
// before any output is written. Grows only when a call needs more than any earlier one.
#include <cstdint>
#include <new>

#include "ampkit/core/error.hpp"
#include "core/checked_math.hpp"
#include "cpu/attention/attention_rows.hpp"

namespace ampkit::cpu {
namespace {

struct Scratch {
  float* data = nullptr;
  std::int64_t capacity = 0;
  ~Scratch() { ::operator delete[](data, std::align_val_t{64}); }
};

}  // namespace

float* attention_scratch(std::int64_t floats_per_thread, int threads, const char* fn) {
  thread_local Scratch scratch;
  const auto floats = checked_mul(attention_pad(floats_per_thread), threads);
  const auto bytes = floats ? checked_mul(*floats, std::int64_t{sizeof(float)}) : std::nullopt;
  if (!bytes)
    fail_with(ErrorKind::out_of_memory, fn, "per-thread scratch of ", floats_per_thread, " floats for ", threads,
              " threads overflows int64");
  if (*floats > scratch.capacity) {
    ::operator delete[](scratch.data, std::align_val_t{64});
    scratch.data = nullptr;
    scratch.capacity = 0;
    try {
      scratch.data = static_cast<float*>(::operator new[](static_cast<std::size_t>(*bytes), std::align_val_t{64}));
    } catch (const std::bad_alloc&) {
      fail_with(ErrorKind::out_of_memory, fn, "could not allocate ", *floats, " floats of per-thread scratch");
    }
    scratch.capacity = *floats;
  }
  return scratch.data;
}

}  // namespace ampkit::cpu
