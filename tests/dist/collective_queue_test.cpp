// CollectiveQueue on one process (tests/dist/): submissions run in order on the queue's thread,
// results are those of the direct calls, the first error comes back from wait() and the queue
// stays usable. Across ranks: collectives_mpi_main.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/dist/collective_queue.hpp"

namespace ampkit::dist {
namespace {

TEST(DistCollectiveQueue, RunsTheSubmissionsInOrderWithTheDirectCallsResults) {
  auto comm = make_local_communicator();
  CollectiveQueue queue(*comm);
  std::vector<float> a(1001), b(1001, -1.0f), c(1001, -2.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = 0.5f * static_cast<float>(i) - 7.0f;
  for (int round = 0; round < 3; ++round) {
    queue.all_gather(a.data(), b.data(), a.size(), DType::f32);
    queue.all_reduce(b.data(), b.size(), DType::f32, ReduceOp::sum);
    queue.all_gather(b.data(), c.data(), b.size(), DType::f32);  // after the first: sees its result
    queue.wait();
    EXPECT_EQ(c, a);
    std::fill(b.begin(), b.end(), -1.0f);
    std::fill(c.begin(), c.end(), -2.0f);
  }
}

TEST(DistCollectiveQueue, ReturnsTheFirstErrorFromWaitAndStaysUsable) {
  auto comm = make_local_communicator();
  CollectiveQueue queue(*comm);
  std::vector<float> a(8, 3.0f), b(8, 0.0f);
  queue.all_gather(nullptr, b.data(), 8, DType::f32);
  queue.reduce_scatter(a.data(), nullptr, 8, DType::f32, ReduceOp::sum);
  queue.all_gather(a.data(), b.data(), 8, DType::f32);  // still runs
  try {
    queue.wait();
    ADD_FAILURE() << "no Error from wait()";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("all_gather: send must not be null when send_count (8) > 0"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(b, a);
  queue.wait();  // the error was reported once
  queue.all_reduce(b.data(), 8, DType::f32, ReduceOp::max);
}

}  // namespace
}  // namespace ampkit::dist
