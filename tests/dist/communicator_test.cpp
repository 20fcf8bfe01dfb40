// The communicator's front end on one process (tests/dist/): chunk layout, the rank-order
// reduction against a plain loop, the local communicator, and the argument errors every engine
// shares. The collectives across ranks: collectives_mpi_main.cpp, run under mpirun by CTest.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/dist/communicator.hpp"
#include "dist/internal.hpp"
#include "support/test_support.hpp"

namespace ampkit::dist {
namespace {

using ampkit::testing::Buffer;

// Runs f, which must throw Error whose message holds every one of `parts`.
template <typename F>
void expect_error(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
    ADD_FAILURE() << "no Error thrown";
  } catch (const Error& e) {
    for (const char* p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

// The documented order, written out plainly: acc = in[0]; acc = acc op in[r] for r = 1.. (in float
// for the floating dtypes, rounded once to the dtype; wrapping for i32).
Buffer plain_rank_order(const std::vector<Buffer>& in, ReduceOp op) {
  Buffer out(in[0].dtype, in[0].size());
  for (std::int64_t i = 0; i < out.size(); ++i) {
    if (in[0].dtype == DType::i32) {
      std::int32_t acc;
      std::memcpy(&acc, in[0].bytes.data() + i * 4, 4);
      for (std::size_t r = 1; r < in.size(); ++r) {
        std::int32_t x;
        std::memcpy(&x, in[r].bytes.data() + i * 4, 4);
        acc = op == ReduceOp::sum
                  ? static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) + static_cast<std::uint32_t>(x))
                  : std::max(acc, x);
      }
      std::memcpy(out.bytes.data() + i * 4, &acc, 4);
      continue;
    }
    auto acc = static_cast<float>(in[0].get(i));
    for (std::size_t r = 1; r < in.size(); ++r) {
      const auto x = static_cast<float>(in[r].get(i));
      if (op == ReduceOp::sum)
        acc += x;
      else if (!std::isnan(acc) && (std::isnan(x) || x > acc))
        acc = x;
    }
    out.set(i, acc);
  }
  return out;
}

std::vector<Buffer> random_inputs(DType dtype, int parts, std::int64_t count, std::mt19937_64& rng) {
  std::vector<Buffer> in;
  for (int r = 0; r < parts; ++r) {
    Buffer b(dtype, count);
    if (dtype == DType::i32) {
      std::uniform_int_distribution<std::int32_t> d(std::numeric_limits<std::int32_t>::min(),
                                                    std::numeric_limits<std::int32_t>::max());
      for (std::int64_t i = 0; i < count; ++i) {
        const std::int32_t v = d(rng);
        std::memcpy(b.bytes.data() + i * 4, &v, 4);
      }
    } else {
      // Magnitudes over six decades, so the order of the additions shows in the rounding.
      std::uniform_real_distribution<double> e(-3, 3);
      std::normal_distribution<double> m(0, 1);
      for (std::int64_t i = 0; i < count; ++i) b.set(i, m(rng) * std::pow(10.0, e(rng)));
    }
    in.push_back(std::move(b));
  }
  return in;
}

TEST(DistChunks, CoverTheBufferInRankOrderWithTheLargerChunksFirst) {
  for (std::size_t count : {0, 1, 2, 5, 7, 100, 1001}) {
    for (int parts = 1; parts <= 5; ++parts) {
      std::size_t next = 0;
      for (int c = 0; c < parts; ++c) {
        const Chunk k = chunk_of(count, parts, c);
        EXPECT_EQ(k.begin, next) << count << " over " << parts << ", chunk " << c;
        EXPECT_EQ(k.count, count / parts + (static_cast<std::size_t>(c) < count % parts ? 1 : 0));
        next += k.count;
      }
      EXPECT_EQ(next, count);
    }
  }
  expect_error([] { chunk_of(10, 0, 0); }, {"chunk_of", "parts", ">= 1", "given 0"});
  expect_error([] { chunk_of(10, 3, 3); }, {"chunk_of", "index", "[0, 3)", "given 3"});
}

TEST(DistReduceInRankOrder, MatchesThePlainLoopBitwiseForEveryDtypeOpAndRankCount) {
  const std::uint64_t seed = ampkit::testing::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (DType dtype : {DType::f32, DType::bf16, DType::f16, DType::i32})
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max})
      for (int parts = 1; parts <= 4; ++parts)
        for (std::int64_t count : {1, 7, 1000}) {
          SCOPED_TRACE(std::string(dtype_name(dtype)) + " " + std::string(reduce_op_name(op)) + " parts " +
                       std::to_string(parts) + " count " + std::to_string(count));
          const std::vector<Buffer> in = random_inputs(dtype, parts, count, rng);
          std::vector<const void*> ptrs;
          for (const Buffer& b : in) ptrs.push_back(b.data());
          Buffer out(dtype, count);
          out.poison();
          reduce_in_rank_order(ptrs.data(), parts, out.data(), static_cast<std::size_t>(count), dtype, op);
          EXPECT_EQ(out.bytes, plain_rank_order(in, op).bytes);
        }
}

TEST(DistReduceInRankOrder, TheOrderShowsInF32SumsOfThreeRanks) {
  // The test above could not tell rank order from another order if the inputs were too tame.
  std::mt19937_64 rng(ampkit::testing::fresh_seed());
  std::vector<Buffer> in = random_inputs(DType::f32, 3, 1000, rng);
  const Buffer forward = plain_rank_order(in, ReduceOp::sum);
  std::swap(in[0], in[2]);
  EXPECT_NE(forward.bytes, plain_rank_order(in, ReduceOp::sum).bytes);
}

TEST(DistReduceInRankOrder, MaxIsNaNWhenAnyRankHasNaNAndSumsInPlace) {
  float a[3] = {1, std::numeric_limits<float>::quiet_NaN(), -2};
  const float b[3] = {std::numeric_limits<float>::quiet_NaN(), 5, -1};
  const void* in[2] = {a, b};
  float out[3];
  reduce_in_rank_order(in, 2, out, 3, DType::f32, ReduceOp::max);
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], -1);
  reduce_in_rank_order(in, 2, a, 3, DType::f32, ReduceOp::sum);  // out is in[0]
  EXPECT_TRUE(std::isnan(a[0]) && std::isnan(a[1]));
  EXPECT_EQ(a[2], -3);
}

TEST(DistLocalCommunicator, IsRankZeroOfOneAndCopies) {
  auto comm = make_local_communicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->name(), "local");
  const float send[5] = {1, -2, 3.5f, 4, 1e-7f};
  float recv[5];
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
    std::fill(recv, recv + 5, std::numeric_limits<float>::quiet_NaN());
    comm->all_reduce(send, recv, 5, DType::f32, op);
    EXPECT_EQ(std::memcmp(send, recv, sizeof send), 0);
  }
  std::fill(recv, recv + 5, 0.f);
  comm->reduce_scatter(send, recv, 5, DType::f32, ReduceOp::sum);
  EXPECT_EQ(std::memcmp(send, recv, sizeof send), 0);
  std::fill(recv, recv + 5, 0.f);
  comm->all_gather(send, recv, 5, DType::f32);
  EXPECT_EQ(std::memcmp(send, recv, sizeof send), 0);
  comm->all_reduce(recv, 5, DType::f32, ReduceOp::sum);  // in place
  comm->broadcast(recv, 5, DType::f32, 0);
  comm->barrier();
  EXPECT_EQ(std::memcmp(send, recv, sizeof send), 0);
  comm->all_reduce(nullptr, nullptr, 0, DType::bf16, ReduceOp::sum);  // length 0: no pointers needed
  comm->all_gather(nullptr, nullptr, 0, DType::i32);
}

TEST(DistCommunicatorErrors, NameTheFunctionTheArgumentWhatWasExpectedAndWhatWasGiven) {
  auto comm = make_local_communicator();
  float buf[8] = {};
  expect_error([&] { comm->all_reduce(nullptr, buf, 4, DType::f32, ReduceOp::sum); },
               {"all_reduce: send must not be null when count (4) > 0"});
  expect_error([&] { comm->all_reduce(buf, nullptr, 4, DType::f32, ReduceOp::sum); },
               {"all_reduce: recv must not be null when count (4) > 0"});
  expect_error([&] { comm->all_reduce(buf, buf + 1, 4, DType::f32, ReduceOp::sum); },
               {"all_reduce", "send and recv", "not overlap", "overlap"});
  expect_error([&] { comm->all_reduce(buf, 4, static_cast<DType>(9), ReduceOp::sum); },
               {"all_reduce: dtype must be f32, bf16, f16 or i32, given the value 9"});
  expect_error([&] { comm->all_reduce(buf, 4, DType::f32, static_cast<ReduceOp>(7)); },
               {"all_reduce: op must be sum or max, given the value 7"});
  int stream = 0;
  expect_error([&] { comm->all_reduce(buf, 4, DType::f32, ReduceOp::sum, &stream); },
               {"all_reduce: stream must be nullptr for the local communicator"});
  expect_error([&] { comm->reduce_scatter(buf, nullptr, 2, DType::f32, ReduceOp::sum); },
               {"reduce_scatter: recv must not be null when recv_count (2) > 0"});
  expect_error([&] { comm->reduce_scatter(buf, buf + 1, 2, DType::f32, ReduceOp::sum); },
               {"reduce_scatter: recv must be send + rank() * recv_count (in place) or not overlap"});
  expect_error([&] { comm->all_gather(nullptr, buf, 3, DType::f32); },
               {"all_gather: send must not be null when send_count (3) > 0"});
  expect_error([&] { comm->broadcast(buf, 4, DType::f32, 1); }, {"broadcast: root must be in [0, 1), given 1"});
  expect_error([&] { comm->broadcast(buf, 4, DType::f32, -1); }, {"broadcast: root", "given -1"});
  expect_error([&] { comm->all_reduce(buf, std::numeric_limits<std::size_t>::max() / 2, DType::f32, ReduceOp::sum); },
               {"all_reduce: count", "overflows"});
  const void* in[2] = {buf, nullptr};
  expect_error([&] { reduce_in_rank_order(in, 2, buf, 4, DType::f32, ReduceOp::sum); },
               {"reduce_in_rank_order: in[1] must not be null when count (4) > 0"});
}

TEST(DistFactories, SayWhatThisBuildLacksAndDefaultToLocalWithoutALauncher) {
  if (!launched_by_mpi()) EXPECT_EQ(make_process_communicator()->name(), "local");
  if (!built_with_mpi()) {
    try {
      make_mpi_communicator();
      ADD_FAILURE() << "no Error thrown";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::unsupported);
      EXPECT_NE(std::string(e.what()).find("libopenmpi-dev"), std::string::npos) << e.what();
    }
  }
  if (!built_with_nccl()) {
    auto local = make_local_communicator();
    expect_error([&] { make_nccl_communicator(*local, 0); }, {"make_nccl_communicator", "-DAMPKIT_NCCL=ON"});
  }
}

TEST(DistTimeout, ComesFromTheOptionsThenTheEnvironmentAndRejectsBadValues) {
  const char* old = std::getenv("AMPKIT_DIST_TIMEOUT_S");
  const std::string saved = old ? old : "";
  unsetenv("AMPKIT_DIST_TIMEOUT_S");
  EXPECT_EQ(detail::collective_timeout_s(0), 300);
  EXPECT_EQ(detail::collective_timeout_s(2.5), 2.5);
  setenv("AMPKIT_DIST_TIMEOUT_S", "7", 1);
  EXPECT_EQ(detail::collective_timeout_s(0), 7);
  setenv("AMPKIT_DIST_TIMEOUT_S", "7s", 1);
  expect_error([] { detail::collective_timeout_s(0); },
               {"make_mpi_communicator: AMPKIT_DIST_TIMEOUT_S must be a positive number of seconds, given \"7s\""});
  setenv("AMPKIT_DIST_TIMEOUT_S", "0", 1);
  expect_error([] { detail::collective_timeout_s(0); }, {"AMPKIT_DIST_TIMEOUT_S", "given \"0\""});
  expect_error([] { detail::collective_timeout_s(-1); }, {"options.timeout_s must be >= 0", "given -1"});
  if (old)
    setenv("AMPKIT_DIST_TIMEOUT_S", saved.c_str(), 1);
  else
    unsetenv("AMPKIT_DIST_TIMEOUT_S");
}

}  // namespace
}  // namespace ampkit::dist
