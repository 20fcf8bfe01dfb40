// A program that initializes MPI itself at the default level (MPI_Init: Open MPI provides
// MPI_THREAD_SINGLE) and then asks for an ampkit communicator: the collective queue's thread needs
// MPI_THREAD_SERIALIZED, so make_mpi_communicator must refuse with the level it found (tests/dist/).
#include <mpi.h>

#include <cstdio>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/dist/communicator.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int provided = 0;
  MPI_Query_thread(&provided);
  int code = 0;
  if (provided >= MPI_THREAD_SERIALIZED) {
    std::printf("skipped: this MPI's MPI_Init provides level %d\n", provided);
    code = 77;
  } else {
    try {
      auto comm = ampkit::dist::make_mpi_communicator();
      std::printf("FAIL: a communicator was made at thread level %d\n", provided);
      code = 1;
    } catch (const ampkit::Error& e) {
      std::printf("refused: %s\n", e.what());
      code = std::string(e.what()).find("MPI_THREAD_SERIALIZED") == std::string::npos ? 1 : 0;
    }
  }
  MPI_Finalize();
  return code;
}
