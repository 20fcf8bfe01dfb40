// Every op's kernel list of every backend (ops layer): what `ampkit info --kernels` prints and
// what the tests walk. Read from the op table (ops/kernel_lists.hpp) of each backend
// (ops/backend.hpp); a backend's empty list (an op it has no kernels for, or every list of the
// absent CUDA backend of a build without it) is left out.
#include "ops/kernel_lists.hpp"
#include "ampkit/ops/kernel_info.hpp"
#include "ops/backend.hpp"

namespace ampkit {

std::vector<KernelList> kernel_lists() {
  std::vector<KernelList> out;
  for (Device device : ops::kBackendDevices) {
    ops::for_each_kernel_list(ops::backend(device).kernels(), [&](const char* op, auto list) {
      if (!list.empty()) out.push_back({op, device, ops::kernel_availability(list)});
    });
  }
  return out;
}

}  // namespace ampkit
