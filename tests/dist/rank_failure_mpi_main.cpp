// A 2-rank job in which rank 1 fails while rank 0 waits in a collective (tests/dist/, run by
// expect_job_failure.sh under mpirun): the job must end non-zero with the failure's message, never
// hang. Modes: throw (an Error caught by dist::abort_job_on_error), unwind (an exception that
// destroys the communicator), stall (rank 1 never calls: rank 0's watchdog aborts), kill (SIGKILL).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "ampkit/core/error.hpp"
#include "ampkit/dist/communicator.hpp"

namespace {

int collective_on_rank_0(ampkit::dist::Communicator& comm, const std::string& mode) {
  float grad[1000] = {};
  if (comm.rank() == 1) {
    if (mode == "throw" || mode == "unwind") ampkit::fail("load_batch", "data file \"bad.txt\" is not UTF-8 (test)");
    if (mode == "kill") std::raise(SIGKILL);
    if (mode == "stall") std::this_thread::sleep_for(std::chrono::seconds(60));
  }
  comm.all_reduce(grad, 1000, ampkit::DType::f32, ampkit::dist::ReduceOp::sum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "throw" && mode != "unwind" && mode != "stall" && mode != "kill") {
    std::fprintf(stderr, "usage: %s throw|unwind|stall|kill\n", argv[0]);
    return 2;
  }
  if (mode == "unwind") {
    try {
      auto comm = ampkit::dist::make_mpi_communicator();
      return collective_on_rank_0(*comm, mode);
    } catch (const ampkit::Error& e) {
      std::fprintf(stderr, "not reached: the communicator's destructor ended the job (%s)\n", e.what());
      return 1;
    }
  }
  auto comm = ampkit::dist::make_mpi_communicator();
  return ampkit::dist::abort_job_on_error(*comm, [&] { return collective_on_rank_0(*comm, mode); });
}
