// Thread count used by ampkit's OpenMP regions (core layer): the set_num_threads value or
// OpenMP's default, bounded by kMaxThreads (include/ampkit/core/threading.hpp).
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
  if (n > 0) return n;
  const int omp = omp_get_max_threads();
  return omp < 1 ? 1 : omp > kMaxThreads ? kMaxThreads : omp;
}

void set_num_threads(int n) {
  if (n < 1 || n > kMaxThreads) fail("set_num_threads", "n must be in [1, ", kMaxThreads, "], but got ", n);
  g_threads.store(n, std::memory_order_relaxed);
}

}  // namespace ampkit
