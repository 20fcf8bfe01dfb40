// Micro-benchmark of the MPI communicator's collectives (bench/, not a test): bytes/s of all_reduce,
// reduce_scatter and all_gather of f32 buffers from 4 KiB to 64 MiB (gradient-sized), beside
// MPI's own MPI_Allreduce (the peer: no order promised) on the same buffers. Run under mpirun:
//   mpirun -np 2 build/bench/ampkit_collectives_bench [max MiB, default 64]
// algbw = buffer bytes / time; busbw = algbw * 2 (N-1) / N for all_reduce, (N-1) / N for the others
// (the bytes each rank's link carries, NCCL's convention). Time: the slowest rank's median.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "ampkit/dist/communicator.hpp"

namespace {

using ampkit::DType;
using ampkit::dist::Communicator;
using ampkit::dist::ReduceOp;

// Median over `reps` timed calls (after 2 warm-up calls) of the slowest rank's time, in seconds.
double time_collective(Communicator& comm, int reps, const std::function<void()>& call) {
  for (int i = 0; i < 2; ++i) call();
  std::vector<float> times;
  for (int i = 0; i < reps; ++i) {
    comm.barrier();
    const auto t0 = std::chrono::steady_clock::now();
    call();
    float t = std::chrono::duration<float>(std::chrono::steady_clock::now() - t0).count();
    comm.all_reduce(&t, 1, DType::f32, ReduceOp::max);
    times.push_back(t);
  }
  std::nth_element(times.begin(), times.begin() + reps / 2, times.end());
  return times[static_cast<std::size_t>(reps / 2)];
}

}  // namespace

int main(int argc, char** argv) {
  auto comm = ampkit::dist::make_mpi_communicator();
  return ampkit::dist::abort_job_on_error(*comm, [&] {
    const double max_mib = argc > 1 ? std::atof(argv[1]) : 64;
    const int n = comm->size();
    const double bus_ar = 2.0 * (n - 1) / n, bus_other = static_cast<double>(n - 1) / n;
    if (comm->rank() == 0) {
      std::printf("ranks %d; GB/s = 1e9 bytes/s; ratio = ampkit all_reduce time / MPI_Allreduce time\n", n);
      std::printf("%10s %12s | %9s %9s | %9s %9s | %9s %9s | %9s %6s\n", "bytes", "f32 elems", "AR algbw", "AR busbw",
                  "RS busbw", "AG busbw", "MPI algbw", "MPI busbw", "AR us", "ratio");
    }
    for (std::size_t bytes = 4096; bytes <= static_cast<std::size_t>(max_mib * 1048576.0); bytes *= 4) {
      const std::size_t count = bytes / 4;
      const std::size_t rows = count / static_cast<std::size_t>(n);
      std::vector<float> a(count, 1.0f + static_cast<float>(comm->rank())), b(count);
      const int reps = static_cast<int>(std::clamp<std::size_t>((std::size_t{256} << 20) / bytes, 5, 200));
      const double ar =
          time_collective(*comm, reps, [&] { comm->all_reduce(a.data(), b.data(), count, DType::f32, ReduceOp::sum); });
      const double rs = time_collective(
          *comm, reps, [&] { comm->reduce_scatter(a.data(), b.data(), rows, DType::f32, ReduceOp::sum); });
      const double ag = time_collective(*comm, reps, [&] { comm->all_gather(a.data(), b.data(), rows, DType::f32); });
      const double peer = time_collective(*comm, reps, [&] {
        MPI_Allreduce(a.data(), b.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      });
      const double rows_bytes = static_cast<double>(rows * 4 * static_cast<std::size_t>(n));
      if (comm->rank() == 0)
        std::printf("%10zu %12zu | %9.3f %9.3f | %9.3f %9.3f | %9.3f %9.3f | %9.1f %6.2f\n", bytes, count,
                    static_cast<double>(bytes) / ar * 1e-9, static_cast<double>(bytes) / ar * 1e-9 * bus_ar,
                    rows_bytes / rs * 1e-9 * bus_other, rows_bytes / ag * 1e-9 * bus_other,
                    static_cast<double>(bytes) / peer * 1e-9, static_cast<double>(bytes) / peer * 1e-9 * bus_ar,
                    ar * 1e6, ar / peer);
    }
    return 0;
  });
}
