// The communication thread of CollectiveQueue (dist layer): pops the submitted collectives in
// order and runs them on the communicator; the first error is kept for wait().
#include "ampkit/dist/collective_queue.hpp"

#include <chrono>
#include <utility>

namespace ampkit::dist {

CollectiveQueue::CollectiveQueue(Communicator& comm) : comm_(comm), thread_([this] { run(); }) {}

CollectiveQueue::~CollectiveQueue() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return next_ == jobs_.size(); });
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void CollectiveQueue::all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op) {
  submit(Job{Kind::all_reduce, buffer, buffer, count, dtype, op});
}

void CollectiveQueue::reduce_scatter(const void* send, void* recv, std::size_t recv_count, DType dtype, ReduceOp op) {
  submit(Job{Kind::reduce_scatter, send, recv, recv_count, dtype, op});
}

void CollectiveQueue::all_gather(const void* send, void* recv, std::size_t send_count, DType dtype) {
  submit(Job{Kind::all_gather, send, recv, send_count, dtype, ReduceOp::sum});
}

void CollectiveQueue::submit(const Job& job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(job);
  }
  work_.notify_one();
}

void CollectiveQueue::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return next_ == jobs_.size(); });
  jobs_.clear();
  next_ = 0;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

double CollectiveQueue::busy_seconds() {
  std::lock_guard<std::mutex> lock(mutex_);
  return busy_s_;
}

void CollectiveQueue::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stop_ || next_ < jobs_.size(); });
    if (next_ == jobs_.size()) return;  // stop_ with nothing left
    const Job job = jobs_[next_];
    lock.unlock();
    const auto start = std::chrono::steady_clock::now();
    try {
      switch (job.kind) {
        case Kind::all_reduce: comm_.all_reduce(job.send, job.recv, job.count, job.dtype, job.op); break;
        case Kind::reduce_scatter: comm_.reduce_scatter(job.send, job.recv, job.count, job.dtype, job.op); break;
        case Kind::all_gather: comm_.all_gather(job.send, job.recv, job.count, job.dtype); break;
      }
    } catch (...) {
      lock.lock();
      if (!error_) error_ = std::current_exception();
      lock.unlock();
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    lock.lock();
    busy_s_ += took.count();
    ++next_;
    if (next_ == jobs_.size()) idle_.notify_all();
  }
}

}  // namespace ampkit::dist
