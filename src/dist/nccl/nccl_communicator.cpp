// The NCCL communicator (dist layer): collectives of device buffers on a CUDA stream through
// NCCL, its ncclUniqueId made by rank 0 and broadcast over the bootstrap communicator (MPI, as
// llm.c does). The sums are NCCL's: reproducible for a fixed N, topology and NCCL_ALGO/NCCL_PROTO,
// but not the rank order of the host communicators (docs/DISTRIBUTED.md). Built only with
// -DAMPKIT_NCCL=ON (cmake/dist.cmake); not compiled on the CI machine, which has no NCCL.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdlib>
#include <exception>

#include "ampkit/core/error.hpp"
#include "ampkit/dist/communicator.hpp"
#include "dist/internal.hpp"

namespace ampkit::dist {
namespace {

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::f32: return ncclFloat32;
    case DType::bf16: return ncclBfloat16;
    case DType::f16: return ncclFloat16;
    case DType::i32: return ncclInt32;
  }
  return ncclFloat32;  // unreachable: the front end checked dtype
}

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::max ? ncclMax : ncclSum; }

void check(const char* fn, const char* call, ncclResult_t rc) {
  if (rc != ncclSuccess) fail_with(ErrorKind::internal, fn, call, " failed: ", ncclGetErrorString(rc));
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Communicator& bootstrap, int device) : bootstrap_(bootstrap) {
    constexpr const char* fn = "make_nccl_communicator";
    if (device < 0) fail(fn, "device must be >= 0, given ", device);
    const cudaError_t err = cudaSetDevice(device);
    if (err != cudaSuccess)
      fail_with(ErrorKind::unsupported, fn, "cudaSetDevice(", device, ") failed: ", cudaGetErrorString(err));
    ncclUniqueId id{};
    static_assert(sizeof(id) % 4 == 0, "the id travels as i32 elements");
    if (bootstrap.rank() == 0) check(fn, "ncclGetUniqueId", ncclGetUniqueId(&id));
    bootstrap.broadcast(&id, sizeof(id) / 4, DType::i32, 0);
    check(fn, "ncclCommInitRank", ncclCommInitRank(&comm_, bootstrap.size(), id, bootstrap.rank()));
  }
  ~NcclCommunicator() override {
    if (std::uncaught_exceptions() > 0) abort(1, "the NCCL communicator was destroyed while an exception unwinds");
    ncclCommDestroy(comm_);
  }

  int rank() const noexcept override { return bootstrap_.rank(); }
  int size() const noexcept override { return bootstrap_.size(); }
  std::string_view name() const noexcept override { return "nccl"; }
  [[noreturn]] void abort(int code, std::string_view message) noexcept override {
    ncclCommAbort(comm_);
    bootstrap_.abort(code, message);
  }

 protected:
  bool takes_stream() const noexcept override { return true; }
  void all_reduce_impl(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op,
                       void* stream) override {
    check("all_reduce", "ncclAllReduce",
          ncclAllReduce(send, recv, count, nccl_type(dtype), nccl_op(op), comm_, static_cast<cudaStream_t>(stream)));
  }
  void reduce_scatter_impl(const void* send, void* recv, std::size_t recv_count, DType dtype, ReduceOp op,
                           void* stream) override {
    check("reduce_scatter", "ncclReduceScatter",
          ncclReduceScatter(send, recv, recv_count, nccl_type(dtype), nccl_op(op), comm_,
                            static_cast<cudaStream_t>(stream)));
  }
  void all_gather_impl(const void* send, void* recv, std::size_t send_count, DType dtype, void* stream) override {
    check("all_gather", "ncclAllGather",
          ncclAllGather(send, recv, send_count, nccl_type(dtype), comm_, static_cast<cudaStream_t>(stream)));
  }
  void broadcast_impl(void* buffer, std::size_t count, DType dtype, int root, void* stream) override {
    check("broadcast", "ncclBroadcast",
          ncclBroadcast(buffer, buffer, count, nccl_type(dtype), root, comm_, static_cast<cudaStream_t>(stream)));
  }
  // Host-side: every rank has enqueued its work before it returns (the streams are not synchronized).
  void barrier_impl() override { bootstrap_.barrier(); }

 private:
  Communicator& bootstrap_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

bool built_with_nccl() noexcept { return true; }

std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int device) {
  return std::make_unique<NcclCommunicator>(bootstrap, device);
}

}  // namespace ampkit::dist
