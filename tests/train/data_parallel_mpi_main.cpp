// Data-parallel training in the library trainer (TrainerConfig::communicator), run by CTest under
// mpirun with 2 ranks (tests/train/data_parallel_tests.cmake). Each rank trains a small GPT on
// its slice of one global batch stream (rank r: rows [r*B, (r+1)*B) of the step's N*B rows) and
// checks, after every step:
//   1. every rank holds bitwise the weights and optimizer state of rank 0 (f32 SGD, and bf16
//      AdamW with clipping, whose skip/clip decisions must agree for this to hold);
//   2. (f32 SGD) the loss equals that of one process at batch N*B (a second, local trainer that
//      every rank runs on the whole global batch) within the summation-order tolerance below.
// The tolerance. The two runs compute the same mean over n = N*B*seq token losses in different
// orders (one process: one mean over n; N ranks: N means over n/N, then their sum / N). Any
// order of a floating-point sum of n terms is within gamma_n * sum|x_i| of the exact sum
// (gamma_n = n*u / (1 - n*u), u = 2^-24 for fp32; Higham, Accuracy and Stability, 4.2), and the
// losses are positive, so at step 1 (equal parameters) |loss_dp - loss_one| <= 2 * (gamma_n + 2u)
// * loss. The gradients differ by the same relative order, so with plain SGD at a small rate the
// parameters, and the later losses, drift by at most about one more such bound per step: the test
// allows tol_k = 2 * (gamma_n + 2u) * loss * k at step k (k = 1..steps) and prints the largest
// observed fraction of it.
//   3. gradients summed in many buckets during the backward give bitwise the state of one bucket
//      after it (buckets_change_no_bit).
//   4. ZeRO-1 gives plain data parallelism's weights bitwise (zero_equals_plain).
// Prints "PASSED: N ranks" when every check holds on every rank.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ampkit/dist/communicator.hpp"
#include "ampkit/train/trainer.hpp"

namespace {

using ampkit::DType;
using ampkit::dist::Communicator;
using ampkit::dist::ReduceOp;
using ampkit::train::Trainer;
using ampkit::train::TrainerConfig;

int g_failures = 0;

void check(bool ok, int rank, const std::string& what) {
  if (ok) return;
  ++g_failures;
  std::printf("FAIL rank %d: %s\n", rank, what.c_str());
  std::fflush(stdout);
}

// The global batch of step `step`: rows x seq token ids and next-token targets, the same on
// every rank (a fixed LCG), ids in [0, vocab).
void global_batch(std::int64_t step, std::int64_t rows, std::int64_t seq, std::int64_t vocab,
                  std::vector<std::int32_t>& tokens, std::vector<std::int32_t>& targets) {
  std::uint64_t x = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(step + 1);
  tokens.resize(static_cast<std::size_t>(rows * seq));
  targets.resize(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    tokens[i] = static_cast<std::int32_t>((x >> 33) % static_cast<std::uint64_t>(vocab));
    targets[i] = static_cast<std::int32_t>(((x >> 33) * 7 + 3) % static_cast<std::uint64_t>(vocab));
  }
}

// Every named tensor of `t` (parameters and optimizer state), concatenated, then the loss-scale
// state and the optimizer's step count.
std::vector<float> state_of(Trainer& t) {
  std::vector<float> out;
  for (const ampkit::train::NamedTensor& n : t.tensors()) out.insert(out.end(), n.data, n.data + n.numel());
  const ampkit::train::LossScaleState s = t.loss_scale();  // the skip decisions, too
  out.insert(out.end(), {s.scale, static_cast<float>(s.good_steps), static_cast<float>(s.skipped_steps),
                         static_cast<float>(t.step_count())});
  return out;
}

// True on every rank when every rank's state equals rank 0's bitwise.
bool same_on_every_rank(Communicator& comm, Trainer& t) {
  const std::vector<float> mine = state_of(t);
  std::vector<float> root = mine;
  comm.broadcast(root.data(), root.size(), DType::f32, 0);
  std::int32_t differs = std::memcmp(mine.data(), root.data(), mine.size() * sizeof(float)) != 0 ? 1 : 0;
  comm.all_reduce(&differs, 1, DType::i32, ReduceOp::max);
  return differs == 0;
}

// Returns the number of steps the data-parallel trainer skipped (non-finite gradients).
int run(Communicator& comm, const char* label, TrainerConfig config, bool compare_to_one_process) {
  const int n = comm.size(), rank = comm.rank();
  ampkit::train::GptConfig g;
  g.vocab = 17, g.seq_len = 8, g.dim = 16, g.heads = 2, g.layers = 1;
  const std::int64_t b = 2, steps = 6;
  config.batch = b;
  config.seed = 11;
  TrainerConfig one_config = config;
  config.communicator = &comm;
  one_config.batch = b * n;
  Trainer dp = Trainer::gpt(g, config);
  Trainer one = Trainer::gpt(g, one_config);
  const double u = std::ldexp(1.0, -24);
  const double terms = static_cast<double>(n * b * g.seq_len);
  const double gamma = terms * u / (1.0 - terms * u);
  double worst = 0.0;
  int skipped = 0;
  std::vector<std::int32_t> tokens, targets;
  for (std::int64_t k = 1; k <= steps; ++k) {
    global_batch(k, n * b, g.seq_len, g.vocab, tokens, targets);
    const auto rows = static_cast<std::size_t>(b * g.seq_len);
    const std::span<const std::int32_t> mine_t(tokens.data() + rank * rows, rows);
    const std::span<const std::int32_t> mine_y(targets.data() + rank * rows, rows);
    const ampkit::train::StepResult r = dp.step(mine_t, mine_y);
    skipped += r.skipped;
    check(same_on_every_rank(comm, dp), rank,
          std::string(label) + ": the ranks' weights or optimizer state differ after step " + std::to_string(k));
    if (!compare_to_one_process) continue;
    const ampkit::train::StepResult s = one.step(tokens, targets);
    const double tol = 2.0 * (gamma + 2.0 * u) * std::fabs(s.loss) * static_cast<double>(k);
    const double diff = std::fabs(r.loss - s.loss);
    worst = std::max(worst, diff / tol);
    char line[256];
    std::snprintf(line, sizeof line,
                  "%s: step %lld: %d ranks loss %.9g, one process at batch %lld: %.9g (|d| %.3g > tol %.3g)", label,
                  static_cast<long long>(k), n, r.loss, static_cast<long long>(b * n), s.loss, diff, tol);
    check(diff <= tol, rank, line);
  }
  if (rank == 0 && compare_to_one_process)
    std::printf(
        "%s: the loss trajectory of %d ranks x batch %lld matches one process at batch %lld within %.3g of "
        "the tolerance\n",
        label, n, static_cast<long long>(b), static_cast<long long>(b * n), worst);
  return skipped;
}

constexpr std::int64_t kPairSteps = 4;

// The 2-block GPT of the pair tests.
ampkit::train::GptConfig pair_model() {
  ampkit::train::GptConfig g;
  g.vocab = 17, g.seq_len = 8, g.dim = 16, g.heads = 2, g.layers = 2;
  return g;
}

// Two data-parallel trainers (configs a and b, batch 2 per rank) stepped on the same rows of the
// same global batches for kPairSteps steps; after each, after(k, a, b, result_a, result_b, the
// global tokens, targets).
template <typename After>
void step_pair(Communicator& comm, TrainerConfig ca, TrainerConfig cb, After&& after) {
  const int n = comm.size(), rank = comm.rank();
  ca.batch = cb.batch = 2;
  ca.communicator = cb.communicator = &comm;
  const ampkit::train::GptConfig g = pair_model();
  Trainer a = Trainer::gpt(g, ca), b = Trainer::gpt(g, cb);
  const std::int64_t rows = ca.micro_batches * ca.batch;
  std::vector<std::int32_t> tokens, targets;
  for (std::int64_t k = 1; k <= kPairSteps; ++k) {
    global_batch(k, n * rows, g.seq_len, g.vocab, tokens, targets);
    const auto count = static_cast<std::size_t>(rows * g.seq_len);
    const std::span<const std::int32_t> mine_t(tokens.data() + rank * count, count);
    const std::span<const std::int32_t> mine_y(targets.data() + rank * count, count);
    const ampkit::train::StepResult ra = a.step(mine_t, mine_y);
    const ampkit::train::StepResult rb = b.step(mine_t, mine_y);
    after(k, a, b, ra, rb, tokens, targets);
  }
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Buckets (TrainerConfig::bucket_bytes): a trainer whose gradients are summed in many small
// buckets during the backward and one summing them in one bucket after it hold bitwise the same
// weights and optimizer state after every step (each element is summed in the same rank order
// whatever its bucket), with and without micro-batches; and (f32) both follow one process at the
// global batch within run()'s tolerance (this checks the micro-batch accumulation in buckets).
void buckets_change_no_bit(Communicator& comm, const char* label, TrainerConfig config) {
  const int n = comm.size(), rank = comm.rank();
  config.seed = 5;
  TrainerConfig one = config;
  config.bucket_bytes = 1024;
  one.bucket_bytes = 0;
  TrainerConfig whole = config;
  whole.micro_batches = 1;
  whole.batch = n * config.micro_batches * 2;
  Trainer reference = Trainer::gpt(pair_model(), whole);
  const double u = std::ldexp(1.0, -24);
  const double terms = static_cast<double>(whole.batch * pair_model().seq_len);
  const double gamma = terms * u / (1.0 - terms * u);
  step_pair(
      comm, config, one,
      [&](std::int64_t k, Trainer& many, Trainer& single, const ampkit::train::StepResult& r,
          const ampkit::train::StepResult& s, const std::vector<std::int32_t>& tokens,
          const std::vector<std::int32_t>& targets) {
        check(same_bits(state_of(many), state_of(single)) && r.loss == s.loss && r.grad_norm == s.grad_norm, rank,
              std::string(label) + ": bucketed and one-bucket states differ after step " + std::to_string(k));
        if (k == kPairSteps) {
          const int buckets = many.communication().buckets;
          check(buckets > 4 && single.communication().buckets == 1, rank,
                std::string(label) + ": " + std::to_string(buckets) + " buckets (the test needs more than 4, and 1)");
          if (rank == 0)
            std::printf("%s: %d buckets during the backward == one bucket after it, bitwise, over %lld steps\n", label,
                        buckets, static_cast<long long>(kPairSteps));
        }
        if (config.compute != DType::f32) return;  // the tolerance is fp32's
        const double loss = reference.step(tokens, targets).loss;
        const double tol = 2.0 * (gamma + 2.0 * u) * std::fabs(loss) * static_cast<double>(k);
        check(std::fabs(r.loss - loss) <= tol, rank,
              std::string(label) + ": step " + std::to_string(k) + ": loss " + std::to_string(r.loss) +
                  " differs from one process at the global batch (" + std::to_string(loss) + ") by more than " +
                  std::to_string(tol));
      });
}

// ZeRO-1 (TrainerConfig::zero = 1): after every step the weights, the optimizer state (gathered
// by gather_state()) and the loss equal plain data parallelism's bit for bit; the gradient norm
// (the shards' norms combined, another order of the same squares) within 1e-12 relative; and
// each rank's optimizer state is about 1/N of plain data parallelism's.
void zero_equals_plain(Communicator& comm, const char* label, TrainerConfig config, std::size_t bucket_bytes) {
  const int n = comm.size(), rank = comm.rank();
  config.seed = 3;
  config.bucket_bytes = bucket_bytes;
  TrainerConfig sharded = config;
  sharded.zero = 1;
  int clipped = 0;
  step_pair(
      comm, config, sharded,
      [&](std::int64_t k, Trainer& plain, Trainer& zero, const ampkit::train::StepResult& r,
          const ampkit::train::StepResult& z, const std::vector<std::int32_t>&, const std::vector<std::int32_t>&) {
        clipped += config.clip_norm > 0.0f && r.grad_norm > config.clip_norm;
        if (k == 2) {
          // Setting one moment between checkpoints (the step freed the staging copy) sets that
          // tensor's shard alone: the other moments keep their values.
          for (const ampkit::train::NamedTensor& t : plain.tensors())
            if (t.name.find(':') != std::string::npos) {
              zero.set_tensor(t.name, std::span<const float>(t.data, static_cast<std::size_t>(t.numel())));
              break;
            }
        }
        zero.gather_state();
        const std::string at = std::string(label) + ": step " + std::to_string(k) + ": ";
        check(same_bits(state_of(plain), state_of(zero)), rank,
              at + "the ZeRO-1 weights or optimizer state differ from plain data parallelism's");
        check(r.loss == z.loss && r.skipped == z.skipped, rank, at + "the ZeRO-1 loss or skip differs");
        check(r.skipped || std::fabs(r.grad_norm - z.grad_norm) <= 1e-12 * r.grad_norm, rank,
              at + "the ZeRO-1 norm " + std::to_string(z.grad_norm) + " vs " + std::to_string(r.grad_norm));
        if (k < kPairSteps) return;
        const std::size_t full = plain.communication().optimizer_state_bytes;
        const std::size_t shard = zero.communication().optimizer_state_bytes;
        const std::size_t slack = 64 * sizeof(float) * static_cast<std::size_t>(n);
        const std::size_t scaled = shard * static_cast<std::size_t>(n);
        check(scaled <= full + slack && scaled + slack >= full, rank,
              std::string(label) + ": ZeRO-1 holds " + std::to_string(shard) + " bytes of optimizer state, not 1/" +
                  std::to_string(n) + " of " + std::to_string(full));
        if (rank == 0)
          std::printf(
              "%s: ZeRO-1 == plain data parallel bitwise over %lld steps (%d clipped); optimizer state %zu of "
              "%zu bytes per rank\n",
              label, static_cast<long long>(kPairSteps), clipped, shard, full);
      });
}

}  // namespace

int main() {
  const std::unique_ptr<Communicator> comm = ampkit::dist::make_mpi_communicator();
  return ampkit::dist::abort_job_on_error(*comm, [&] {
    TrainerConfig sgd;
    sgd.compute = DType::f32;
    sgd.optimizer.kind = ampkit::train::OptimizerKind::sgd;
    sgd.optimizer.lr = 0.05f;
    run(*comm, "f32 sgd", sgd, true);
    TrainerConfig adamw;
    adamw.compute = DType::bf16;
    adamw.optimizer.lr = 3e-3f;
    adamw.optimizer.weight_decay = 0.1f;
    adamw.clip_norm = 0.5f;
    run(*comm, "bf16 adamw clip", adamw, false);
    // fp16 starting at a loss scale that overflows (2^20, then 2^16 > 65504): the first steps are
    // skipped, which every rank must decide alike (the state compared includes the scaler's).
    TrainerConfig fp16 = adamw;
    fp16.compute = DType::f16;
    fp16.loss_scale.initial_scale = 1048576.0f;
    fp16.loss_scale.backoff = 1.0f / 16.0f;
    const int skipped = run(*comm, "f16 adamw loss scaling", fp16, false);
    check(skipped > 0 && skipped < 6, comm->rank(),
          "f16: " + std::to_string(skipped) + " of 6 steps skipped; the test needs some skipped and some taken");
    if (comm->rank() == 0) std::printf("f16 adamw loss scaling: %d of 6 steps skipped on every rank\n", skipped);
    buckets_change_no_bit(*comm, "buckets, bf16 adamw clip", adamw);
    TrainerConfig micro = sgd;
    micro.micro_batches = 2;
    buckets_change_no_bit(*comm, "buckets, f32 sgd 2 micro-batches", micro);
    zero_equals_plain(*comm, "zero, bf16 adamw clip, small buckets", adamw, 1024);
    zero_equals_plain(*comm, "zero, bf16 adamw clip, one bucket", adamw, 0);
    TrainerConfig momentum = micro;
    momentum.optimizer.momentum = 0.9f;
    momentum.optimizer.weight_decay = 0.01f;
    zero_equals_plain(*comm, "zero, f32 sgd momentum 2 micro-batches", momentum, 2048);
    zero_equals_plain(*comm, "zero, f16 adamw loss scaling", fp16, 1024);
    std::int32_t failures = g_failures;
    comm->all_reduce(&failures, 1, DType::i32, ReduceOp::max);
    if (comm->rank() == 0 && failures == 0) std::printf("PASSED: %d ranks\n", comm->size());
    return failures == 0 ? 0 : 1;
  });
}
