// Threading (core layer): the number of OpenMP threads ampkit kernels use.
// Results never depend on it: kernels split reductions by fixed-size blocks of the data.
#pragma once

namespace ampkit {

/// The most threads an ampkit call uses. Per-thread scratch and the work split are sized by the
/// thread count, so it is bounded: set_num_threads rejects more, and a larger OpenMP default
/// (OMP_NUM_THREADS=100000, say) is clamped to this value (a library call has no one to tell;
/// `ampkit info` prints the count in effect).
inline constexpr int kMaxThreads = 1024;

/// Threads used by ampkit kernels: set_num_threads, else OMP_NUM_THREADS (or OpenMP's default,
/// the core count), clamped to [1, kMaxThreads].
int num_threads();
/// Sets the thread count for later calls. Throws Error if n < 1 or n > kMaxThreads.
void set_num_threads(int n);

}  // namespace ampkit
