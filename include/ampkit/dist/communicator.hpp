// ampkit::dist::Communicator — the collectives of data-parallel training (dist layer: above the
// backends, below train; depends on core only). Implementations: `local` (one process, always
// built), `mpi` (Open MPI, host memory, sums in a fixed rank order: docs/DISTRIBUTED.md) and
// `nccl` (optional, device memory on a CUDA stream, bootstrapped over another communicator).
// Called by the trainer's gradient averaging, its sharded optimizer and the tests in tests/dist/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>

#include "ampkit/core/dtype.hpp"

namespace ampkit::dist {

/// How all_reduce and reduce_scatter combine the ranks' elements.
///   sum: rank 0's element + rank 1's + ... + rank N-1's, added left to right (f32 and the 16-bit
///        types accumulate in float and round once at the end; i32 wraps modulo 2^32).
///   max: the largest element; NaN when any rank's element is NaN (the first NaN in rank order).
enum class ReduceOp : std::uint8_t { sum, max };

/// "sum" or "max" ("?" outside the enumeration).
std::string_view reduce_op_name(ReduceOp op);

/// One rank's piece of a buffer of `count` elements split over `parts` ranks: chunk c starts at
/// `begin` and holds count / parts elements, one more for the first count % parts chunks.
struct Chunk {
  std::size_t begin = 0;
  std::size_t count = 0;
};

/// The chunk of rank `index` (0 <= index < parts) when `count` elements are split over `parts`.
/// Throws Error when parts < 1 or index is out of range.
Chunk chunk_of(std::size_t count, int parts, int index);

/// Combines `parts` buffers of `count` elements into `out` in rank order: out[i] =
/// ((in[0][i] op in[1][i]) op in[2][i]) ... (the rule of ReduceOp). `out` may be one of `in`.
/// This is what every host communicator computes for chunk c of a reduction (docs/DISTRIBUTED.md).
/// Throws Error on a null pointer with count > 0, parts < 1, or a dtype/op outside the enums.
void reduce_in_rank_order(const void* const* in, int parts, void* out, std::size_t count, DType dtype, ReduceOp op);

/// A group of `size()` processes that call the same collectives in the same order. Buffers are
/// host memory for `local` and `mpi` (stream must be nullptr) and device memory for `nccl`
/// (stream: a cudaStream_t; nullptr is the default stream). Counts are in elements of `dtype`.
/// Every collective validates its arguments on the calling rank and throws Error naming the
/// function, the argument, what was expected and what was given; a rank that stops taking part
/// ends the job through abort() (a peer waiting longer than the timeout aborts it too).
class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// This process's rank, 0 <= rank() < size().
  virtual int rank() const noexcept = 0;
  /// The number of ranks.
  virtual int size() const noexcept = 0;
  /// "local", "mpi" or "nccl".
  virtual std::string_view name() const noexcept = 0;

  /// recv[i] = the ReduceOp of every rank's send[i], i < count, equal on every rank.
  /// send == recv reduces in place; otherwise the two must not overlap.
  void all_reduce(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op, void* stream = nullptr);
  /// In-place all_reduce of a buffer.
  void all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op, void* stream = nullptr) {
    all_reduce(buffer, buffer, count, dtype, op, stream);
  }

  /// send: [size(), recv_count]; recv: [recv_count] = the ReduceOp over ranks of chunk rank() of
  /// send. In place when recv == send + rank() * recv_count; otherwise no overlap.
  void reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType dtype, ReduceOp op,
                      void* stream = nullptr);

  /// send: [send_count]; recv: [size(), send_count], row r = rank r's send. In place when
  /// send == recv + rank() * send_count; otherwise no overlap.
  void all_gather(const void* send, void* recv, std::size_t send_count, DType dtype, void* stream = nullptr);

  /// buffer: [count]; every rank's buffer becomes rank `root`'s. 0 <= root < size().
  void broadcast(void* buffer, std::size_t count, DType dtype, int root, void* stream = nullptr);

  /// Returns once every rank has called it.
  void barrier();

  /// Ends every rank of the job with exit status `code` after printing `message` (with this
  /// rank's number) on stderr — the agreed path when one rank fails, so the others never wait
  /// for it. For `local` it prints and exits the process.
  [[noreturn]] virtual void abort(int code, std::string_view message) noexcept = 0;

 protected:
  // The validated operations. Pointers are non-null when their count is > 0.
  virtual void all_reduce_impl(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op,
                               void* stream) = 0;
  virtual void reduce_scatter_impl(const void* send, void* recv, std::size_t recv_count, DType dtype, ReduceOp op,
                                   void* stream) = 0;
  virtual void all_gather_impl(const void* send, void* recv, std::size_t send_count, DType dtype, void* stream) = 0;
  virtual void broadcast_impl(void* buffer, std::size_t count, DType dtype, int root, void* stream) = 0;
  virtual void barrier_impl() = 0;
  /// True when the implementation runs on device streams (nccl); host ones require stream == nullptr.
  virtual bool takes_stream() const noexcept { return false; }
};

/// Settings of the MPI communicator.
struct MpiOptions {
  /// Seconds a rank waits inside one collective for its peers before it aborts the job with a
  /// message naming the ranks it waited for. 0: the environment's AMPKIT_DIST_TIMEOUT_S, else 300.
  double timeout_s = 0;
};

/// The one-process communicator (rank 0 of 1): collectives copy send to recv.
std::unique_ptr<Communicator> make_local_communicator();

/// The MPI communicator over MPI_COMM_WORLD (a duplicate of it). Initializes MPI when the program
/// has not (MPI_THREAD_SERIALIZED: one thread at a time calls it) and finalizes it when destroyed;
/// keep it alive for the whole run. Destroyed while an exception unwinds, it aborts the job.
/// Throws Error (unsupported) in a build without MPI; Error (invalid_argument) on bad options or a
/// bad AMPKIT_DIST_TIMEOUT_S.
std::unique_ptr<Communicator> make_mpi_communicator(const MpiOptions& options = {});

/// The NCCL communicator over the ranks of `bootstrap` (rank 0 makes the ncclUniqueId and
/// broadcasts it through `bootstrap`), on CUDA device `device`. Buffers are device memory.
/// Throws Error (unsupported) in a build without NCCL (configure with -DAMPKIT_NCCL=ON).
std::unique_ptr<Communicator> make_nccl_communicator(Communicator& bootstrap, int device);

/// True when this build has the MPI (resp. NCCL) communicator.
bool built_with_mpi() noexcept;
bool built_with_nccl() noexcept;

/// True when the environment says an MPI launcher started this process (OMPI_COMM_WORLD_SIZE,
/// PMI_SIZE or PMIX_RANK is set).
bool launched_by_mpi() noexcept;

/// The communicator a program gets by default: mpi when launched_by_mpi(), else local. Throws
/// Error (unsupported) when launched by mpirun with more than one rank in a build without MPI.
std::unique_ptr<Communicator> make_process_communicator(const MpiOptions& options = {});

/// Runs body(); when it throws on a communicator of more than one rank, prints the error and ends
/// the whole job through comm.abort(1) (so no peer waits for this rank); on one rank rethrows.
/// Returns what body returns.
template <typename Body>
auto abort_job_on_error(Communicator& comm, Body&& body) -> decltype(body());

namespace detail {
[[noreturn]] void abort_for_current_exception(Communicator& comm) noexcept;
}  // namespace detail

template <typename Body>
auto abort_job_on_error(Communicator& comm, Body&& body) -> decltype(body()) {
  try {
    return std::forward<Body>(body)();
  } catch (...) {
    if (comm.size() == 1) throw;
    detail::abort_for_current_exception(comm);
  }
}

}  // namespace ampkit::dist
