// ampkit::dist::CollectiveQueue — collectives run in order on a communication thread of their
// own (dist layer), so a caller can hand over a gradient bucket during the backward pass and keep
// computing: the overlap of issue 23's bucketed all-reduce. Called by the trainer (planned:
// /work/coord/dist-architecture.md); tested in tests/dist/.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/dist/communicator.hpp"

namespace ampkit::dist {

/// A FIFO of collectives on `comm`, run one at a time, in submission order, by one thread this
/// object owns. Every rank must submit the same collectives in the same order (as for direct
/// calls), and no other thread may call `comm` between the first submit and wait() (the MPI
/// engine runs MPI_THREAD_SERIALIZED). The buffers must stay valid and untouched until wait().
/// The results are the bits the direct calls give (same engine, same order).
class CollectiveQueue {
 public:
  explicit CollectiveQueue(Communicator& comm);
  /// Waits for the submitted collectives (an error is dropped: call wait() to see it), then joins.
  ~CollectiveQueue();
  CollectiveQueue(const CollectiveQueue&) = delete;
  CollectiveQueue& operator=(const CollectiveQueue&) = delete;

  /// Enqueues comm.all_reduce(buffer, count, dtype, op) (in place); returns at once.
  void all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op);
  /// Enqueues comm.reduce_scatter(send, recv, recv_count, dtype, op); returns at once.
  void reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType dtype, ReduceOp op);
  /// Enqueues comm.all_gather(send, recv, send_count, dtype); returns at once.
  void all_gather(const void* send, void* recv, std::size_t send_count, DType dtype);

  /// Blocks until every submitted collective has run; then rethrows the first one's Error, if
  /// any (the argument checks of Communicator run on the queue's thread). The queue stays usable.
  void wait();

  /// Seconds the queue's thread has spent inside collectives since construction (the
  /// communication time of a step, whether or not the caller was computing meanwhile).
  double busy_seconds();

 private:
  enum class Kind : unsigned char { all_reduce, reduce_scatter, all_gather };
  struct Job {
    Kind kind;
    const void* send;
    void* recv;
    std::size_t count;
    DType dtype;
    ReduceOp op;
  };
  void submit(const Job& job);
  void run();

  Communicator& comm_;
  std::mutex mutex_;
  std::condition_variable work_, idle_;
  std::vector<Job> jobs_;  // reused: cleared by wait(), so steady-state submits do not allocate
  std::size_t next_ = 0;   // jobs_[next_] is the next to run
  bool stop_ = false;
  std::exception_ptr error_;
  double busy_s_ = 0.0;
  std::thread thread_;  // last: starts after the members above exist
};

}  // namespace ampkit::dist
