// ops::backend(device), and the absent CUDA backend of a build without it (ops layer). The one
// compile-time choice of the tree: this file alone sees AMPKIT_HAVE_CUDA (CMakeLists.txt), so the
// CUDA backend object comes from src/cuda/runtime/cuda_backend.cpp when it is built and from here
// otherwise. An explicit reference, not a self-registering object: a static library drops an
// object file that nothing names, and a registry filled at static-initialisation time would
// depend on link order (docs/ARCHITECTURE.md, "Backends").
#include "ops/backend.hpp"

#include "ampkit/core/error.hpp"
#include "ops/kernel_lists.hpp"

namespace ampkit::ops {

const Backend& backend(Device device) { return device == Device::cuda ? cuda_backend() : cpu_backend(); }

#if !AMPKIT_HAVE_CUDA
namespace {

constexpr const char* kNoBackend =
    "this build has no CUDA backend (configure with -DAMPKIT_CUDA=ON on a machine with nvcc)";

[[noreturn]] void no_backend(const char* fn) { fail_with(ErrorKind::unsupported, fn, kNoBackend); }

// Every list empty, every query says why, every action throws unsupported.
class AbsentBackend final : public Backend {
 public:
  AbsentBackend() : Backend(Device::cuda, "cuda", lists_) {}

  bool built() const override { return false; }
  const char* unavailable() const override { return kNoBackend; }
  int usable_devices() const override { return 0; }
  std::string device_description(int) const override { no_backend("cuda_device_description"); }
  const char* pointer_problem(const void*, int) const override { return kNoBackend; }
  void* allocate(std::size_t, int) const override { no_backend("cuda_malloc"); }
  void deallocate(void*) const noexcept override {}
  void copy_to_device(void*, const void*, std::size_t, int) const override { no_backend("cuda_copy_to_device"); }
  void copy_to_host(void*, const void*, std::size_t, int) const override { no_backend("cuda_copy_to_host"); }
  void copy_on_device(void*, const void*, std::size_t, int) const override { no_backend("cuda_copy_on_device"); }
  void copy_on_device_async(void*, const void*, std::size_t, int) const override {
    no_backend("cuda_copy_on_device_async");
  }
  void fill_bytes(void*, int, std::size_t, int) const override { no_backend("cuda_fill_bytes"); }
  void set_stream(void*, int) const override { no_backend("set_cuda_stream"); }
  void* stream(int) const override { no_backend("cuda_stream"); }
  void synchronize(int) const override { no_backend("cuda_synchronize"); }
  std::size_t workspace_bytes(int) const noexcept override { return 0; }
  void release_workspace(int) const override {}

 private:
  KernelLists lists_;
};

}  // namespace

const Backend& cuda_backend() {
  static const AbsentBackend b;
  return b;
}
#endif

}  // namespace ampkit::ops
