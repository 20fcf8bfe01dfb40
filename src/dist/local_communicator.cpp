// The one-process communicator (dist layer): rank 0 of 1, so every collective is a copy of send to
// recv (nothing when in place). What a build without MPI, or a run without mpirun, trains on.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ampkit/core/error.hpp"
#include "ampkit/dist/communicator.hpp"
#include "dist/internal.hpp"

namespace ampkit::dist {
namespace {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const noexcept override { return 0; }
  int size() const noexcept override { return 1; }
  std::string_view name() const noexcept override { return "local"; }
  [[noreturn]] void abort(int code, std::string_view message) noexcept override {
    detail::print_rank_message(0, 1, message);
    std::exit(code);
  }

 protected:
  void all_reduce_impl(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp, void*) override {
    copy(send, recv, count * dtype_size(dtype));
  }
  void reduce_scatter_impl(const void* send, void* recv, std::size_t recv_count, DType dtype, ReduceOp,
                           void*) override {
    copy(send, recv, recv_count * dtype_size(dtype));
  }
  void all_gather_impl(const void* send, void* recv, std::size_t send_count, DType dtype, void*) override {
    copy(send, recv, send_count * dtype_size(dtype));
  }
  void broadcast_impl(void*, std::size_t, DType, int, void*) override {}
  void barrier_impl() override {}

 private:
  static void copy(const void* send, void* recv, std::size_t bytes) {
    if (send != recv && bytes > 0) std::memcpy(recv, send, bytes);
  }
};

}  // namespace

std::unique_ptr<Communicator> make_local_communicator() { return std::make_unique<LocalCommunicator>(); }

}  // namespace ampkit::dist
