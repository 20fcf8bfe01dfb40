// Thread count used by ampkit's OpenMP regions (core layer).
#include "ampkit/core/threading.hpp"

#include <omp.h>

#include <atomic>

#include "ampkit/core/error.hpp"

namespace ampkit {
namespace {
std::atomic<int> g_threads{0};  // 0: not set, use OpenMP's default
}

int num_threads() {
  const int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : omp_get_max_threads();
}

void set_num_threads(int n) {
  if (n < 1) fail("set_num_threads", "n must be >= 1, but got ", n);
  g_threads.store(n, std::memory_order_relaxed);
}

}  // namespace ampkit
