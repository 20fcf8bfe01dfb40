// The MPI communicator (dist layer): collectives over MPI point-to-point calls on a duplicate of
// MPI_COMM_WORLD, so the sums are ampkit's own, in a fixed rank order (MPI_Allreduce promises no
// order). all_reduce = reduce-scatter (rank c receives chunk c of every rank and adds them in rank
// order 0, 1, ..., N-1: reduce_in_rank_order) + all-gather of the chunks. Every wait has a
// watchdog: a rank that waits longer than the timeout for a peer aborts the job, saying which.
// Built only with MPI (cmake/dist.cmake); docs/DISTRIBUTED.md.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/dist/communicator.hpp"
#include "dist/internal.hpp"

namespace ampkit::dist {
namespace {

// One tag per collective (and phase), so ranks that call different collectives never match each
// other's messages (they wait, and the watchdog names the missing peers).
enum Tag : int { kAllReduceScatter = 101, kAllReduceGather, kReduceScatter, kAllGather, kBroadcast };

// MPI counts are int: a transfer is sent as messages of at most this many bytes.
constexpr std::size_t kPieceBytes = std::size_t{1} << 30;

// Live MPI communicators of this process, and whether one of them initialized MPI.
int g_live = 0;
bool g_we_initialized = false;

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(const MpiOptions& options) : timeout_s_(detail::collective_timeout_s(options.timeout_s)) {
    constexpr const char* fn = "make_mpi_communicator";
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (finalized)
      fail_with(ErrorKind::unsupported, fn,
                "MPI was finalized when the last communicator was destroyed and cannot start again; keep one "
                "communicator for the whole run");
    if (!initialized) {
      int provided = 0;
      const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      if (rc != MPI_SUCCESS) fail_with(ErrorKind::unsupported, fn, "MPI_Init_thread failed: ", mpi_error_string(rc));
      g_we_initialized = true;
    }
    // The collective queue calls MPI from its own thread, one call at a time: SERIALIZED is the
    // least that is correct, also when the caller initialized MPI itself.
    int provided = 0;
    check(fn, "MPI_Query_thread", MPI_Query_thread(&provided));
    if (provided < MPI_THREAD_SERIALIZED)
      fail_with(ErrorKind::unsupported, fn, "MPI must provide MPI_THREAD_SERIALIZED (", MPI_THREAD_SERIALIZED,
                ") or more, but provides level ", provided,
                g_we_initialized ? " (this MPI build has no thread support)"
                                 : " (the program called MPI_Init or MPI_Init_thread with a lower level)");
    check(fn, "MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    ++g_live;
    check(fn, "MPI_Comm_set_errhandler", MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    check(fn, "MPI_Comm_rank", MPI_Comm_rank(comm_, &rank_));
    check(fn, "MPI_Comm_size", MPI_Comm_size(comm_, &size_));
    parts_.resize(static_cast<std::size_t>(size_));
  }

  ~MpiCommunicator() override {
    // With peers, finalizing now would leave them waiting in their next collective (or hang in
    // MPI_Finalize with them): end the job. One rank alone finalizes as usual.
    if (std::uncaught_exceptions() > 0 && size_ > 1)
      abort(1,
            "the MPI communicator was destroyed while an exception unwinds; ending the job so no rank waits "
            "for this one (dist::abort_job_on_error prints the exception's message)");
    MPI_Comm_free(&comm_);
    if (--g_live == 0 && g_we_initialized) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized) MPI_Finalize();
    }
  }

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  std::string_view name() const noexcept override { return "mpi"; }

  [[noreturn]] void abort(int code, std::string_view message) noexcept override {
    detail::print_rank_message(rank_, size_, message);
    MPI_Abort(comm_, code == 0 ? 1 : code);
    std::_Exit(code == 0 ? 1 : code);  // MPI_Abort does not return; this is for the compiler
  }

 protected:
  void all_reduce_impl(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op, void*) override {
    constexpr const char* fn = "all_reduce";
    const std::size_t elem = dtype_size(dtype);
    auto* out = static_cast<std::byte*>(recv);
    const Chunk mine = chunk_of(count, size_, rank_);
    reduce_my_chunk(fn, static_cast<const std::byte*>(send), out + mine.begin * elem, count, 0, dtype, op,
                    kAllReduceScatter);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const Chunk c = chunk_of(count, size_, r);
      post_recv(out + c.begin * elem, c.count * elem, r, kAllReduceGather);
    }
    for (int r = 0; r < size_; ++r)
      if (r != rank_) post_send(out + mine.begin * elem, mine.count * elem, r, kAllReduceGather);
    wait_all(fn, count, dtype);
  }

  void reduce_scatter_impl(const void* send, void* recv, std::size_t recv_count, DType dtype, ReduceOp op,
                           void*) override {
    reduce_my_chunk("reduce_scatter", static_cast<const std::byte*>(send), static_cast<std::byte*>(recv), 0, recv_count,
                    dtype, op, kReduceScatter);
  }

  void all_gather_impl(const void* send, void* recv, std::size_t send_count, DType dtype, void*) override {
    const std::size_t bytes = send_count * dtype_size(dtype);
    auto* out = static_cast<std::byte*>(recv);
    std::byte* mine = out + static_cast<std::size_t>(rank_) * bytes;
    if (send != mine && bytes > 0) std::memcpy(mine, send, bytes);
    for (int r = 0; r < size_; ++r)
      if (r != rank_) post_recv(out + static_cast<std::size_t>(r) * bytes, bytes, r, kAllGather);
    for (int r = 0; r < size_; ++r)
      if (r != rank_) post_send(mine, bytes, r, kAllGather);
    wait_all("all_gather", send_count, dtype);
  }

  void broadcast_impl(void* buffer, std::size_t count, DType dtype, int root, void*) override {
    const std::size_t bytes = count * dtype_size(dtype);
    if (rank_ == root) {
      for (int r = 0; r < size_; ++r)
        if (r != root) post_send(buffer, bytes, r, kBroadcast);
    } else {
      post_recv(buffer, bytes, root, kBroadcast);
    }
    wait_all("broadcast", count, dtype);
  }

  void barrier_impl() override {
    requests_.emplace_back();
    posted_.push_back(Posted{-1, false, 0});
    check("barrier", "MPI_Ibarrier", MPI_Ibarrier(comm_, &requests_.back()));
    wait_all("barrier", 0, DType::f32);
  }

 private:
  struct Posted {
    int peer;  // -1: every rank (barrier)
    bool is_recv;
    std::size_t bytes;  // what a receive expects
  };

  void check(const char* fn, const char* call, int rc) const {
    if (rc != MPI_SUCCESS) fail_with(ErrorKind::internal, fn, call, " failed: ", mpi_error_string(rc));
  }

  // Rank order reduction of this rank's chunk: chunk r of `send` goes to rank r, this rank's chunk
  // of every rank arrives in scratch_, and out = chunk 0 + chunk 1 + ... in rank order. Chunks are
  // chunk_of(count) (all_reduce) or `equal` elements each (reduce_scatter, count == 0).
  void reduce_my_chunk(const char* fn, const std::byte* send, std::byte* out, std::size_t count, std::size_t equal,
                       DType dtype, ReduceOp op, int tag) {
    const std::size_t elem = dtype_size(dtype);
    auto chunk = [&](int r) {
      return equal > 0 || count == 0 ? Chunk{static_cast<std::size_t>(r) * equal, equal} : chunk_of(count, size_, r);
    };
    const Chunk mine = chunk(rank_);
    const std::size_t bytes = mine.count * elem;
    const std::size_t need = bytes * static_cast<std::size_t>(size_ - 1);
    if (scratch_.size() < need) scratch_.resize(need);
    auto slot = [&](int r) { return scratch_.data() + static_cast<std::size_t>(r < rank_ ? r : r - 1) * bytes; };
    for (int r = 0; r < size_; ++r)
      if (r != rank_) post_recv(slot(r), bytes, r, tag);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      const Chunk c = chunk(r);
      post_send(send + c.begin * elem, c.count * elem, r, tag);
    }
    wait_all(fn, count > 0 ? count : equal, dtype);
    for (int r = 0; r < size_; ++r)
      parts_[static_cast<std::size_t>(r)] = r == rank_ ? send + mine.begin * elem : slot(r);
    reduce_in_rank_order(parts_.data(), size_, out, mine.count, dtype, op);
  }

  // Pieces of at most kPieceBytes; one (empty) message when bytes == 0, so every transfer is seen
  // by both sides and a peer that called with another count is caught by the size check.
  template <typename Post>
  void post_pieces(std::size_t bytes, Post post) {
    std::size_t offset = 0;
    do {
      const std::size_t n = std::min(kPieceBytes, bytes - offset);
      post(offset, n);
      offset += n;
    } while (offset < bytes);
  }

  void post_recv(void* buffer, std::size_t bytes, int peer, int tag) {
    post_pieces(bytes, [&](std::size_t offset, std::size_t n) {
      requests_.emplace_back();
      posted_.push_back(Posted{peer, true, n});
      check("receive", "MPI_Irecv",
            MPI_Irecv(static_cast<std::byte*>(buffer) + offset, static_cast<int>(n), MPI_BYTE, peer, tag, comm_,
                      &requests_.back()));
    });
  }

  void post_send(const void* buffer, std::size_t bytes, int peer, int tag) {
    post_pieces(bytes, [&](std::size_t offset, std::size_t n) {
      requests_.emplace_back();
      posted_.push_back(Posted{peer, false, n});
      check("send", "MPI_Isend",
            MPI_Isend(const_cast<std::byte*>(static_cast<const std::byte*>(buffer)) + offset, static_cast<int>(n),
                      MPI_BYTE, peer, tag, comm_, &requests_.back()));
    });
  }

  // Completes every posted request. Aborts the job when a peer keeps this rank waiting past the
  // timeout; throws Error when a peer sent another size (it called with another count or dtype).
  void wait_all(const char* fn, std::size_t count, DType dtype) {
    const int n = static_cast<int>(requests_.size());
    statuses_.resize(requests_.size());
    indices_.resize(requests_.size());
    std::string mismatch;
    const auto start = std::chrono::steady_clock::now();
    int done = 0;
    for (unsigned spin = 1; done < n; ++spin) {
      int completed = 0;
      const int rc = MPI_Testsome(n, requests_.data(), &completed, indices_.data(), statuses_.data());
      if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
        clear();
        fail_with(ErrorKind::internal, fn, "MPI_Testsome failed: ", mpi_error_string(rc));
      }
      if (completed == MPI_UNDEFINED) break;
      for (int k = 0; k < completed; ++k) {
        const Posted& p = posted_[static_cast<std::size_t>(indices_[static_cast<std::size_t>(k)])];
        const MPI_Status& st = statuses_[static_cast<std::size_t>(k)];
        if (rc == MPI_ERR_IN_STATUS && st.MPI_ERROR != MPI_SUCCESS && mismatch.empty()) {
          mismatch = st.MPI_ERROR == MPI_ERR_TRUNCATE
                         ? ampkit::detail::concat("rank ", p.peer, " sent more than the ", p.bytes,
                                                  " bytes this rank expected")
                         : ampkit::detail::concat("the transfer with rank ", p.peer,
                                                  " failed: ", mpi_error_string(st.MPI_ERROR));
        } else if (p.is_recv && mismatch.empty()) {
          int got = 0;
          MPI_Get_count(&st, MPI_BYTE, &got);
          if (static_cast<std::size_t>(got) != p.bytes)
            mismatch =
                ampkit::detail::concat("rank ", p.peer, " sent ", got, " bytes where this rank expected ", p.bytes);
        }
      }
      done += completed;
      // Polls like MPI_Waitall does, for the first 4096 polls; then, still waiting (a peer is
      // still computing), sleeps 20 us between polls, so that a waiting rank, or the trainer's
      // communication thread during the backward, leaves the core to the computing threads
      // (2 ranks on 2 cores: spinning would halve the backward's speed).
      if (completed == 0 && spin % 1024 == 0) watchdog(fn, start);
      if (completed == 0 && spin > 4096) std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    clear();
    if (!mismatch.empty())
      fail(fn, mismatch, " (this rank called with count ", count, " of ", dtype_name(dtype),
           "): every rank must call the same collective with the same count and dtype");
  }

  void watchdog(const char* fn, std::chrono::steady_clock::time_point start) {
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited <= timeout_s_) return;
    std::string peers;
    std::vector<int> seen;
    for (std::size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i] == MPI_REQUEST_NULL) continue;
      const int peer = posted_[i].peer;
      if (std::find(seen.begin(), seen.end(), peer) != seen.end()) continue;
      seen.push_back(peer);
      peers += (peers.empty() ? "" : ", ") + (peer < 0 ? std::string("some rank") : std::to_string(peer));
    }
    abort(1, ampkit::detail::concat(fn, ": waited ", timeout_s_, " s for rank(s) ", peers,
                                    " (a rank failed, stopped, or called another collective); ending the job "
                                    "(AMPKIT_DIST_TIMEOUT_S sets the limit)"));
  }

  void clear() {
    for (MPI_Request& r : requests_)
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    requests_.clear();
    posted_.clear();
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  double timeout_s_;
  // Reused by every collective, so a call allocates only when it needs more than any before it.
  std::vector<MPI_Request> requests_;
  std::vector<Posted> posted_;
  std::vector<MPI_Status> statuses_;
  std::vector<int> indices_;
  std::vector<std::byte> scratch_;
  std::vector<const void*> parts_;
};

}  // namespace

bool built_with_mpi() noexcept { return true; }

std::unique_ptr<Communicator> make_mpi_communicator(const MpiOptions& options) {
  return std::make_unique<MpiCommunicator>(options);
}

}  // namespace ampkit::dist
