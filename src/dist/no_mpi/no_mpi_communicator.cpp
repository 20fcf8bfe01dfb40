// The MPI communicator's stand-in in a build without MPI (dist layer): says how to get it.
#include "ampkit/core/error.hpp"
#include "ampkit/dist/communicator.hpp"

namespace ampkit::dist {

bool built_with_mpi() noexcept { return false; }

std::unique_ptr<Communicator> make_mpi_communicator(const MpiOptions&) {
  fail_with(ErrorKind::unsupported, "make_mpi_communicator",
            "this build has no MPI (install libopenmpi-dev and configure with -DAMPKIT_MPI=ON)");
}

}  // namespace ampkit::dist
