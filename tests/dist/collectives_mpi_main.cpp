// The MPI communicator's collectives across ranks (tests/dist/, run by CTest under mpirun with 2
// and 3 ranks): every rank makes every rank's random input from one broadcast seed, so each can
// compute the one-process reference (the rank-order sum written as a plain loop) and compare its
// result bitwise; odd lengths, 0 and 1, every dtype and op, in place and not, and a second call
// that must give the same bits. Prints one line per failure and exits non-zero on any rank.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/float16.hpp"
#include "ampkit/dist/collective_queue.hpp"
#include "ampkit/dist/communicator.hpp"

namespace {

using ampkit::DType;
using ampkit::dist::Communicator;
using ampkit::dist::ReduceOp;
using Bytes = std::vector<unsigned char>;

int g_failures = 0;

void check(bool ok, int rank, const std::string& what) {
  if (ok) return;
  ++g_failures;
  std::printf("FAIL rank %d: %s\n", rank, what.c_str());
}

float load(const Bytes& b, DType t, std::size_t i) {
  std::uint16_t h;
  float f;
  switch (t) {
    case DType::f32: std::memcpy(&f, b.data() + 4 * i, 4); return f;
    case DType::bf16: std::memcpy(&h, b.data() + 2 * i, 2); return ampkit::bf16_bits_to_float(h);
    default: std::memcpy(&h, b.data() + 2 * i, 2); return ampkit::half_bits_to_float(h);
  }
}

void store(Bytes& b, DType t, std::size_t i, float v) {
  if (t == DType::f32) {
    std::memcpy(b.data() + 4 * i, &v, 4);
    return;
  }
  const std::uint16_t h = t == DType::bf16 ? ampkit::float_to_bf16_bits(v) : ampkit::float_to_half_bits(v);
  std::memcpy(b.data() + 2 * i, &h, 2);
}

// Rank r's input of `count` elements for case `id`: a function of (seed, id, r) only.
Bytes input_of(std::uint64_t seed, int id, int r, DType t, std::size_t count) {
  std::mt19937_64 rng(seed * 1000003u + static_cast<std::uint64_t>(id) * 131u + static_cast<std::uint64_t>(r));
  Bytes b(count * ampkit::dtype_size(t));
  for (std::size_t i = 0; i < count; ++i) {
    if (t == DType::i32) {
      const auto v = static_cast<std::int32_t>(static_cast<std::uint32_t>(rng()));
      std::memcpy(b.data() + 4 * i, &v, 4);
    } else {
      const double e = std::uniform_real_distribution<double>(-3, 3)(rng);
      store(b, t, i, static_cast<float>(std::normal_distribution<double>(0, 1)(rng) * std::pow(10.0, e)));
    }
  }
  return b;
}

// The one-process reference: acc = rank 0's element, then acc op= rank r's for r = 1, ..., N-1.
Bytes reference(const std::vector<Bytes>& in, DType t, ReduceOp op, std::size_t count) {
  Bytes out(count * ampkit::dtype_size(t));
  for (std::size_t i = 0; i < count; ++i) {
    if (t == DType::i32) {
      std::int32_t acc, x;
      std::memcpy(&acc, in[0].data() + 4 * i, 4);
      for (std::size_t r = 1; r < in.size(); ++r) {
        std::memcpy(&x, in[r].data() + 4 * i, 4);
        acc = op == ReduceOp::sum
                  ? static_cast<std::int32_t>(static_cast<std::uint32_t>(acc) + static_cast<std::uint32_t>(x))
                  : (x > acc ? x : acc);
      }
      std::memcpy(out.data() + 4 * i, &acc, 4);
      continue;
    }
    float acc = load(in[0], t, i);
    for (std::size_t r = 1; r < in.size(); ++r) {
      const float x = load(in[r], t, i);
      acc = op == ReduceOp::sum ? acc + x : (x > acc ? x : acc);
    }
    store(out, t, i, acc);
  }
  return out;
}

std::string label(const char* what, DType t, ReduceOp op, std::size_t count) {
  return std::string(what) + " " + std::string(ampkit::dtype_name(t)) + " " +
         std::string(ampkit::dist::reduce_op_name(op)) + " count " + std::to_string(count);
}

void poison(Bytes& b) {
  if (!b.empty()) std::memset(b.data(), 0xFF, b.size());
}

void run(Communicator& comm, std::uint64_t seed) {
  const int me = comm.rank(), n = comm.size();
  const auto un = static_cast<std::size_t>(n);
  int id = 0;
  for (DType t : {DType::f32, DType::bf16, DType::f16, DType::i32}) {
    const std::size_t elem = ampkit::dtype_size(t);
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
      for (std::size_t count : {0, 1, 2, 3, 7, 1000, 1001, 65537}) {
        ++id;
        std::vector<Bytes> in;
        for (int r = 0; r < n; ++r) in.push_back(input_of(seed, id, r, t, count));
        const Bytes want = reference(in, t, op, count);

        Bytes got(count * elem);
        poison(got);
        comm.all_reduce(count ? in[me].data() : nullptr, count ? got.data() : nullptr, count, t, op);
        check(got == want, me, label("all_reduce", t, op, count) + " differs from the rank-order reference");
        Bytes again = in[me];
        comm.all_reduce(count ? again.data() : nullptr, count, t, op);  // in place, second call
        check(again == got, me, label("all_reduce in place", t, op, count) + " differs from the first call");

        // reduce_scatter: rank r's send is [n, count]; the rank-order reference of chunk `me`.
        std::vector<Bytes> rows;
        for (int r = 0; r < n; ++r) rows.push_back(input_of(seed, id + 100000, r, t, count * un));
        std::vector<Bytes> mine;
        for (int r = 0; r < n; ++r)
          mine.emplace_back(rows[r].begin() + static_cast<std::ptrdiff_t>(me * count * elem),
                            rows[r].begin() + static_cast<std::ptrdiff_t>((me + 1) * count * elem));
        Bytes part(count * elem);
        poison(part);
        comm.reduce_scatter(count ? rows[me].data() : nullptr, count ? part.data() : nullptr, count, t, op);
        check(part == reference(mine, t, op, count), me, label("reduce_scatter", t, op, count));
        Bytes inplace = rows[me];
        comm.reduce_scatter(count ? inplace.data() : nullptr, count ? inplace.data() + me * count * elem : nullptr,
                            count, t, op);
        check(count == 0 || std::memcmp(inplace.data() + me * count * elem, part.data(), part.size()) == 0, me,
              label("reduce_scatter in place", t, op, count));
      }
    }
    // all_gather and broadcast: data movement, once per dtype.
    for (std::size_t count : {0, 1, 5, 1001}) {
      ++id;
      Bytes all(count * elem * un), want;
      poison(all);
      for (int r = 0; r < n; ++r) {
        const Bytes b = input_of(seed, id, r, t, count);
        want.insert(want.end(), b.begin(), b.end());
      }
      const Bytes mine = input_of(seed, id, me, t, count);
      comm.all_gather(count ? mine.data() : nullptr, count ? all.data() : nullptr, count, t);
      check(all == want, me, label("all_gather", t, ReduceOp::sum, count));
      for (int root = 0; root < n; ++root) {
        Bytes b = me == root ? input_of(seed, id, root, t, count) : Bytes(count * elem, 0xFF);
        comm.broadcast(count ? b.data() : nullptr, count, t, root);
        check(b == input_of(seed, id, root, t, count), me,
              label("broadcast", t, ReduceOp::sum, count) + " from root " + std::to_string(root));
      }
    }
  }
  comm.barrier();
}

// Gradient buckets all-reduced on a CollectiveQueue's thread give the direct calls' bits.
void check_queue(Communicator& comm, std::uint64_t seed) {
  const std::size_t sizes[] = {1, 4099, 0, 65536, 777};
  std::vector<Bytes> buckets, direct;
  int id = 900000;
  for (std::size_t count : sizes) {
    buckets.push_back(input_of(seed, ++id, comm.rank(), DType::f32, count));
    direct.push_back(buckets.back());
    comm.all_reduce(count ? direct.back().data() : nullptr, count, DType::f32, ReduceOp::sum);
  }
  ampkit::dist::CollectiveQueue queue(comm);
  for (int round = 0; round < 2; ++round) {
    std::vector<Bytes> work = round == 0 ? std::move(buckets) : std::vector<Bytes>{};
    if (round == 1) {
      id = 900000;
      for (std::size_t count : sizes) work.push_back(input_of(seed, ++id, comm.rank(), DType::f32, count));
    }
    for (std::size_t k = work.size(); k-- > 0;)  // the last bucket first, as backward produces them
      queue.all_reduce(work[k].empty() ? nullptr : work[k].data(), work[k].size() / 4, DType::f32, ReduceOp::sum);
    queue.wait();
    for (std::size_t k = 0; k < work.size(); ++k)
      check(work[k] == direct[k], comm.rank(),
            "queued all_reduce of bucket " + std::to_string(k) + " round " + std::to_string(round) +
                " differs from the direct call");
  }
}

// A rank that calls with another count gets an Error naming the collective, not silent garbage.
void check_mismatch_is_caught(Communicator& comm) {
  if (comm.size() != 2) return;
  std::vector<float> buf(8, 1.0f);
  const std::size_t count = comm.rank() == 0 ? 4 : 6;
  try {
    comm.all_reduce(buf.data(), count, DType::f32, ReduceOp::sum);
    check(false, comm.rank(), "all_reduce with counts 4 and 6 did not throw");
  } catch (const ampkit::Error& e) {
    check(std::string(e.what()).find("all_reduce: rank") != std::string::npos &&
              std::string(e.what()).find("same count and dtype") != std::string::npos,
          comm.rank(), std::string("mismatch message: ") + e.what());
  }
  comm.barrier();
}

}  // namespace

int main() {
  auto comm = ampkit::dist::make_mpi_communicator();
  return ampkit::dist::abort_job_on_error(*comm, [&] {
    std::int32_t seed[2] = {0, 0};
    if (comm->rank() == 0) {
      const char* fixed = std::getenv("AMPKIT_TEST_SEED");
      const std::uint64_t s = fixed ? std::strtoull(fixed, nullptr, 10) : std::random_device{}();
      seed[0] = static_cast<std::int32_t>(s & 0x7fffffff);
    }
    comm->broadcast(seed, 2, DType::i32, 0);
    run(*comm, static_cast<std::uint64_t>(seed[0]));
    check_queue(*comm, static_cast<std::uint64_t>(seed[0]));
    check_mismatch_is_caught(*comm);
    std::int32_t failed = g_failures > 0 ? 1 : 0;
    comm->all_reduce(&failed, 1, DType::i32, ReduceOp::max);
    if (comm->rank() == 0)
      std::printf("%s: %d ranks, seed %d (AMPKIT_TEST_SEED replays it)\n", failed ? "FAILED" : "PASSED", comm->size(),
                  seed[0]);
    return failed ? 1 : 0;
  });
}
