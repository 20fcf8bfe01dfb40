// The NCCL communicator's stand-in in a build without NCCL (dist layer): says how to get it.
#include "ampkit/core/error.hpp"
#include "ampkit/dist/communicator.hpp"

namespace ampkit::dist {

bool built_with_nccl() noexcept { return false; }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator&, int) {
  fail_with(ErrorKind::unsupported, "make_nccl_communicator",
            "this build has no NCCL (configure with -DAMPKIT_CUDA=ON -DAMPKIT_NCCL=ON, "
            "NCCL_ROOT pointing at nccl.h and libnccl: docs/DISTRIBUTED.md)");
}

}  // namespace ampkit::dist
