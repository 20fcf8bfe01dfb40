// Threading (core layer): the number of OpenMP threads ampkit kernels use.
// Results never depend on it: kernels split reductions by fixed-size blocks of the data.
#pragma once

namespace ampkit {

/// Threads used by ampkit kernels: set_num_threads, else OMP_NUM_THREADS, else the core count.
int num_threads();
/// Sets the thread count for later calls; throws Error if n < 1.
void set_num_threads(int n);

}  // namespace ampkit
