// Per-thread fp32 scratch of the norm kernels (kernels layer): the dgamma/dbeta block partials
// and rows widened to f32. Grows only when a call needs more than any earlier one on the thread.
#include <cstdint>
#include <new>

#include "ampkit/core/error.hpp"
#include "ops/norm/norm_kernels.hpp"

namespace ampkit::cpu {
namespace {

struct Scratch {
  float* data = nullptr;
  std::int64_t capacity = 0;
  ~Scratch() { ::operator delete[](data, std::align_val_t{64}); }
};

float* grow(Scratch& scratch, std::int64_t floats) {
  if (floats > scratch.capacity) {
    ::operator delete[](scratch.data, std::align_val_t{64});
    scratch.data = nullptr;
    scratch.capacity = 0;
    const std::int64_t grown = floats + floats / 2;
    try {
      scratch.data =
          static_cast<float*>(::operator new[](static_cast<std::size_t>(grown) * sizeof(float), std::align_val_t{64}));
    } catch (const std::bad_alloc&) {
      // On the calling thread (one-thread calls, the reference) this reaches the caller before
      // any output is written; validation bounds n so the byte count cannot overflow.
      fail_with(ErrorKind::out_of_memory, "norm", "could not allocate ", floats, " floats of per-thread scratch");
    }
    scratch.capacity = grown;
  }
  return scratch.data;
}

}  // namespace

float* norm_scratch(std::int64_t floats) {
  thread_local Scratch scratch;
  return grow(scratch, floats);
}

float* norm_row_scratch(std::int64_t floats) {
  thread_local Scratch scratch;
  return grow(scratch, floats);
}

}  // namespace ampkit::cpu
