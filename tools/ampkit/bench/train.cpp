// `ampkit bench train` (tools layer, bench/): one training step of the default small GPT of
// `ampkit train` (2 blocks, width 128, 4 heads, context 64, batch 32, vocabulary 113; the sizes
// and the device are options), fused and unfused: step time, the sum of the executor's per-node
// times, the rest (optimizer, clipping, loss scaling, executor dispatch, and on cuda the parameter
// and gradient copies), the time per node kind, heap growth in the steady state, and the model
// FLOP utilization against the machine's ceiling measured in the same run; beside it the same
// step in PyTorch, eager or torch.compile (bench/torch_train_step.py, peers/torch_train_peer.hpp).
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "ampkit/dist/communicator.hpp"
#include "ampkit/train/trainer.hpp"
#include "tools/ampkit/bench/cuda/cuda_bench.hpp"
#include "tools/ampkit/bench/peak.hpp"
#include "tools/ampkit/bench/peers/torch_train_peer.hpp"
#include "tools/ampkit/bench/timing.hpp"
#include "tools/ampkit/cli/dispatch.hpp"
#include "tools/ampkit/cli/options.hpp"
#include "tools/ampkit/commands.hpp"
#include "tools/ampkit/common/json_line.hpp"

namespace ampkit::tools {
namespace {

// The median of per-step samples (seconds), as every bench command computes it.
double median(std::vector<double> v) { return bench::summarize_samples(std::move(v), 1).median_ms; }

struct Measured {
  double step_s = 0.0, nodes_s = 0.0;
  std::int64_t parameters = 0;               // the trainer's parameter count (model FLOPs)
  std::map<std::string, double> per_kind_s;  // median over steps of each kind's summed time
  long long heap_growth = 0;                 // heap bytes in use after `steps` more steps minus before
};

// The measured model and where it runs (the options; defaults: ampkit train's default GPT).
struct TrainShape {
  std::int64_t width = 128, depth = 2, heads = 4, context = 64, batch = 32;
  bool cuda = false;
  double tokens() const { return static_cast<double>(batch * context); }
  // Model FLOPs of one training step (forward + backward), counted as llm.c and PaLM count
  // them: 6 N per token for the N parameters' matrix products (embeddings included, as llm.c),
  // plus 12 x depth x width x context per token for attention's two products (the causal mask's
  // skipped half counted too). Recomputation and the optimizer are not model FLOPs.
  double model_flops(std::int64_t parameters) const {
    const double per_token = 6.0 * static_cast<double>(parameters) +
                             12.0 * static_cast<double>(depth * width) * static_cast<double>(context);
    return per_token * tokens();
  }
};

// The ceiling the model FLOP utilization is quoted against, measured in this run: on cuda the
// plain cuBLASLt bf16 GEMM at 8192^3 (bf16 and fp16 steps; fp32 has no tensor-core peer here);
// on the cpu the fastest of the machine's multiply loops (AMX, AVX512_BF16 dot products, fp32
// FMA) for bf16/fp16, fp32 FMA for fp32, at the trainer's thread count.
struct Ceiling {
  double tflops = 0.0;  // NaN when not measured
  const char* name = "";
};
Ceiling measure_ceiling(const TrainShape& shape, DType compute, int threads) {
  if (shape.cuda) {
    if (compute == DType::f32) return {std::nan(""), "none (fp32)"};
    return {bench::measure_bf16_ceiling_tflops(8192), "cublaslt_bf16_8192"};
  }
  Ceiling best{1e-3 * bench::measure_peak_gflops(bench::PeakKind::fma_f32, threads), "fma_f32"};
  if (compute == DType::f32) return best;
  for (const bench::PeakKind k : {bench::PeakKind::dpbf16, bench::PeakKind::amx_bf16}) {
    const double t = 1e-3 * bench::measure_peak_gflops(k, threads);
    if (t > best.tflops) best = {t, bench::peak_name(k)};  // NaN (missing) never compares greater
  }
  return best;
}

// The measured GPT and its trainer's config (ampkit train's optimizer and clipping).
train::GptConfig bench_model(const TrainShape& shape) {
  train::GptConfig model;
  model.vocab = 113, model.seq_len = shape.context, model.dim = shape.width, model.heads = shape.heads;
  model.layers = shape.depth;
  return model;
}
train::TrainerConfig bench_config(const TrainShape& shape, DType compute) {
  train::TrainerConfig config;
  config.batch = shape.batch, config.compute = compute, config.clip_norm = 1.0f, config.seed = 1;
  config.device = shape.cuda ? Device::cuda : Device::cpu;
  config.optimizer.lr = 1e-3f, config.optimizer.weight_decay = 0.1f;
  return config;
}

// A fixed stream of batch x context token ids and targets from `seed` (the speed does not
// depend on the values).
struct TokenStream {
  std::vector<std::int32_t> tokens, targets;
  TokenStream(const TrainShape& shape, std::uint64_t seed) {
    const auto count = static_cast<std::size_t>(shape.batch * shape.context);
    tokens.resize(count), targets.resize(count);
    std::uint64_t state = seed;
    for (std::size_t i = 0; i < count; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      tokens[i] = static_cast<std::int32_t>((state >> 33) % 113);
      targets[i] = static_cast<std::int32_t>((state >> 13) % 113);
    }
  }
};

Measured measure(DType compute, bool fuse, std::int64_t steps, const TrainShape& shape) {
  train::TrainerConfig config = bench_config(shape, compute);
  config.fuse = fuse;
  train::Trainer trainer = train::Trainer::gpt(bench_model(shape), config);
  const TokenStream stream(shape, 1);
  Measured m;
  m.parameters = trainer.parameter_count();
  const std::vector<std::int32_t>& tokens = stream.tokens;
  const std::vector<std::int32_t>& targets = stream.targets;
  for (int i = 0; i < 3; ++i) trainer.step(tokens, targets);  // warm-up: plan, workspaces, pages
  // Heap in use across steps with no bookkeeping of this benchmark in between.
  const long long heap_before = static_cast<long long>(mallinfo2().uordblks);
  for (std::int64_t s = 0; s < steps; ++s) trainer.step(tokens, targets);
  const long long heap_after = static_cast<long long>(mallinfo2().uordblks);
  std::vector<double> step_times, node_times;
  std::map<std::string, std::vector<double>> kinds;
  for (std::int64_t s = 0; s < steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    trainer.step(tokens, targets);
    step_times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    double total = 0.0;
    std::map<std::string, double> by_kind;
    for (const train::NodeTiming& t : trainer.node_timings()) {
      total += t.seconds;
      by_kind[t.op] += t.seconds;
    }
    node_times.push_back(total);
    for (const auto& [op, secs] : by_kind) kinds[op].push_back(secs);
  }
  m.step_s = median(step_times);
  m.nodes_s = median(node_times);
  for (auto& [op, v] : kinds) m.per_kind_s[op] = median(v);
  m.heap_growth = heap_after - heap_before;
  return m;
}

// The --json lines of one thread count: one per graph (fused, unfused, pytorch) and one per node
// kind of the fused graph.
// The options of the peer script that fix the same model and device.
// peer: "pytorch" (eager) or "pytorch-compile".
std::vector<std::string> peer_options(const TrainShape& s, const std::string& peer) {
  return {"--device",  s.cuda ? "cuda" : "cpu",
          "--width",   std::to_string(s.width),
          "--depth",   std::to_string(s.depth),
          "--heads",   std::to_string(s.heads),
          "--context", std::to_string(s.context),
          "--batch",   std::to_string(s.batch),
          "--mode",    peer == "pytorch-compile" ? "compile" : "eager"};
}

// The fields every --json line of a run starts with.
tools::JsonLine json_head(const std::string& precision, int threads, const TrainShape& s) {
  tools::JsonLine line;
  line.add("bench", "train").add("precision", precision).add("threads", threads);
  line.add("device", s.cuda ? "cuda" : "cpu").add("width", s.width).add("depth", s.depth).add("heads", s.heads);
  line.add("context", s.context).add("batch", s.batch);
  return line;
}

void print_json(const std::string& precision, int threads, std::int64_t steps, const std::string& peer,
                const TrainShape& shape) {
  const DType compute = precision == "fp32" ? DType::f32 : precision == "fp16" ? DType::f16 : DType::bf16;
  const Measured fused = measure(compute, true, steps, shape), unfused = measure(compute, false, steps, shape);
  const Ceiling ceiling = measure_ceiling(shape, compute, threads);
  for (const auto& [label, m] : {std::pair<const char*, const Measured&>{"fused", fused}, {"unfused", unfused}}) {
    tools::JsonLine line = json_head(precision, threads, shape);
    line.add("graph", label);
    line.add("step_ms", 1e3 * m.step_s).add("nodes_ms", 1e3 * m.nodes_s).add("rest_ms", 1e3 * (m.step_s - m.nodes_s));
    line.add("tokens_per_s", shape.tokens() / m.step_s)
        .add("heap_growth_bytes", static_cast<std::int64_t>(m.heap_growth));
    const double tflops = 1e-12 * shape.model_flops(m.parameters) / m.step_s;
    line.add("parameters", m.parameters).add("model_tflops", tflops).add("ceiling", ceiling.name);
    if (std::isfinite(ceiling.tflops))
      line.add("ceiling_tflops", ceiling.tflops).add("mfu", tflops / ceiling.tflops);
    else
      line.add_null("mfu");
    std::printf("%s\n", line.str().c_str());
  }
  if (peer != "none") {
    std::string why;
    const std::optional<bench::TorchStep> torch =
        bench::run_torch_train_peer(precision, threads, steps, peer_options(shape, peer), why);
    tools::JsonLine line = json_head(precision, threads, shape);
    line.add("graph", peer);
    if (torch)
      line.add("step_ms", torch->step_ms)
          .add("version", torch->version)
          .add("ampkit_speedup", torch->step_ms / (1e3 * fused.step_s))
          .add("model_tflops", 1e-12 * shape.model_flops(fused.parameters) / (1e-3 * torch->step_ms));
    else
      line.add_null("step_ms").add("why", why);
    std::printf("%s\n", line.str().c_str());
  }
  for (const auto& [op, secs] : fused.per_kind_s) {
    tools::JsonLine line = json_head(precision, threads, shape);
    line.add("graph", "fused");
    line.add("node_kind", op).add("ms", 1e3 * secs).add("share", secs / fused.nodes_s);
    std::printf("%s\n", line.str().c_str());
  }
}

// Data-parallel scaling (--ranks N, under mpirun -np N): the fused step of `shape` (batch rows per
// rank: weak scaling) on rank 0 alone (the others wait in a barrier), then on all N ranks over
// the MPI communicator, each rank at its own rows. Prints, on rank 0, the medians of both step
// times, the scaling efficiency = N-rank tokens/s / (N x 1-rank tokens/s) = step_1 / step_N, the
// communication time per step (the collectives on the communication thread), the part of it not
// overlapped with the backward (the wait after it), the overlap = 1 - waited / communication,
// and the optimizer-state bytes per rank.
int bench_ranks(int ranks, DType compute, const std::string& precision, std::int64_t steps, const TrainShape& shape,
                std::size_t bucket_bytes, int zero, bool json) {
  const std::unique_ptr<dist::Communicator> comm = dist::make_process_communicator();
  if (comm->size() != ranks)
    throw cli::UsageError(detail::concat("--ranks ", ranks, " needs mpirun -np ", ranks, ", but this job has ",
                                         comm->size(), comm->size() == 1 ? " process" : " processes"));
  return dist::abort_job_on_error(*comm, [&] {
    const train::GptConfig model = bench_model(shape);
    train::TrainerConfig config = bench_config(shape, compute);
    config.bucket_bytes = bucket_bytes, config.zero = zero;
    const TokenStream stream(shape, 1 + static_cast<std::uint64_t>(comm->rank()));  // each rank its own rows
    const std::vector<std::int32_t>& tokens = stream.tokens;
    const std::vector<std::int32_t>& targets = stream.targets;
    const auto time_steps = [&](train::Trainer& t) {
      for (int i = 0; i < 3; ++i) t.step(tokens, targets);
      std::vector<double> v;
      for (std::int64_t k = 0; k < steps; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        t.step(tokens, targets);
        v.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return median(v);
    };
    double one_s = 0.0;
    std::size_t one_state = 0;
    if (comm->rank() == 0) {
      train::Trainer alone = train::Trainer::gpt(model, config);
      one_s = time_steps(alone);
      for (const train::NamedTensor& n : alone.tensors())
        if (n.name.find(':') != std::string::npos) one_state += static_cast<std::size_t>(n.numel()) * sizeof(float);
    }
    comm->barrier();
    config.communicator = comm.get();
    train::Trainer dp = train::Trainer::gpt(model, config);
    const train::CommunicationStats before = (time_steps(dp), dp.communication());
    const double n_s = time_steps(dp);
    const train::CommunicationStats after = dp.communication();
    const double comm_s = (after.collective_s - before.collective_s) / static_cast<double>(steps);
    const double waited_s = (after.waited_s - before.waited_s) / static_cast<double>(steps);
    if (comm->rank() != 0) return 0;
    const double efficiency = one_s / n_s, overlap = comm_s > 0.0 ? 1.0 - waited_s / comm_s : 0.0;
    const double tokens_1 = shape.tokens() / one_s, tokens_n = shape.tokens() * ranks / n_s;
    if (json) {
      tools::JsonLine line = json_head(precision, num_threads(), shape);
      line.add("ranks", ranks).add("zero", zero).add("buckets", after.buckets);
      line.add("step_ms_1_rank", 1e3 * one_s).add("step_ms_n_ranks", 1e3 * n_s);
      line.add("tokens_per_s_1_rank", tokens_1).add("tokens_per_s_n_ranks", tokens_n).add("efficiency", efficiency);
      line.add("communication_ms", 1e3 * comm_s).add("not_overlapped_ms", 1e3 * waited_s).add("overlap", overlap);
      line.add("optimizer_state_bytes_1_rank", static_cast<std::int64_t>(one_state))
          .add("optimizer_state_bytes_per_rank", static_cast<std::int64_t>(after.optimizer_state_bytes));
      std::printf("%s\n", line.str().c_str());
      return 0;
    }
    std::printf(
        "bench train --ranks %d: GPT width %lld, depth %lld, %lld heads, context %lld, batch %lld per rank; %s "
        "compute, %d threads per rank, %lld timed steps (medians), %d gradient buckets, zero %d\n\n",
        ranks, static_cast<long long>(shape.width), static_cast<long long>(shape.depth),
        static_cast<long long>(shape.heads), static_cast<long long>(shape.context), static_cast<long long>(shape.batch),
        precision.c_str(), num_threads(), static_cast<long long>(steps), after.buckets, zero);
    std::printf("  1 rank:   step %8.2f ms  %10.0f tokens/s  optimizer state %zu bytes\n", 1e3 * one_s, tokens_1,
                one_state);
    std::printf("  %d ranks:  step %8.2f ms  %10.0f tokens/s  optimizer state %zu bytes per rank\n", ranks, 1e3 * n_s,
                tokens_n, after.optimizer_state_bytes);
    std::printf("  scaling efficiency %.3f (= %d-rank tokens/s / (%d x 1-rank tokens/s))\n", efficiency, ranks, ranks);
    std::printf("  communication %.2f ms per step, %.2f ms of it not overlapped with the backward: overlap %.2f\n",
                1e3 * comm_s, 1e3 * waited_s, overlap);
    return 0;
  });
}

}  // namespace

int run_bench_train(const Args& args) {
  std::optional<std::string> precision, peer, device;
  std::optional<std::int64_t> steps, width, depth, heads, context, batch, ranks;
  std::optional<std::string> bucket_mb, zero;
  std::vector<int> thread_counts;
  bool json = false;
  cli::OptionParser parser("bench train",
                           "One training step of ampkit train's default GPT (2 blocks, width 128, 4 heads, context\n"
                           "64, batch 32; or the sizes given), fused and unfused: medians of step time, summed node\n"
                           "time, the rest, and the time per node kind; heap growth over the timed steps; the same\n"
                           "step in PyTorch. On cuda the node times are host times (enqueue and waits); with\n"
                           "CUDA_LAUNCH_BLOCKING=1 each launch waits, so each node is charged its own kernels.");
  parser.choice("--precision", {"fp32", "bf16", "fp16"}, &precision, "compute dtype (default bf16)")
      .integer("--steps", "N", 1, 100000, &steps, "timed steps after 3 warm-up steps (default 20)")
      .thread_list("--threads", &thread_counts,
                   "thread counts to measure, or all: 1 and every core\n(default: OMP_NUM_THREADS or the cores)")
      .choice("--peer", {"pytorch", "pytorch-compile", "none"}, &peer,
              "pytorch (default): also time bench/torch_train_step.py, the same\nstep in PyTorch eager, when python3 "
              "can import torch;\npytorch-compile: with torch.compile, SDPA and fused AdamW")
      .choice("--device", {"cpu", "cuda"}, &device, "where the graph runs (default cpu; cuda: GPU 0)")
      .integer("--width", "N", 8, 4096, &width, "model width (default 128)")
      .integer("--depth", "N", 1, 64, &depth, "transformer blocks (default 2)")
      .integer("--heads", "N", 1, 256, &heads, "attention heads; divides --width (default 4)")
      .integer("--context", "N", 1, 4096, &context, "tokens per sequence (default 64)")
      .integer("--batch", "N", 1, 4096, &batch, "sequences per step (default 32)")
      .integer("--ranks", "N", 2, 1024, &ranks,
               "under mpirun -np N: data-parallel scaling instead (the fused step\non 1 rank, then on N ranks, batch "
               "per rank; efficiency,\ncommunication and overlap; docs/TRAIN.md \"Scaling out\")")
      .text("--bucket-mb", "MB", &bucket_mb, "with --ranks: gradient bucket size (default 0.25)")
      .choice("--zero", {"0", "1"}, &zero, "with --ranks: 1 for ZeRO-1 (default 0)")
      .flag("--json", &json,
            "one JSON object per line (per thread count and graph, then per\nnode kind) instead of tables");
  if (!parser.parse(args)) return 0;
  TrainShape shape;
  shape.width = width.value_or(shape.width), shape.depth = depth.value_or(shape.depth);
  shape.heads = heads.value_or(shape.heads), shape.context = context.value_or(shape.context);
  shape.batch = batch.value_or(shape.batch), shape.cuda = device == "cuda";
  if (shape.width % shape.heads != 0)
    cli::usage_fail("--width ", shape.width, " must be a multiple of --heads ", shape.heads,
                    " (each head gets width / heads dimensions)");
  const std::string p = precision.value_or("bf16");
  const DType compute = p == "fp32" ? DType::f32 : p == "fp16" ? DType::f16 : DType::bf16;
  const std::int64_t n = steps.value_or(20);
  if (thread_counts.empty()) thread_counts.push_back(num_threads());
  if (ranks) {
    const std::size_t bucket_bytes =
        bucket_mb ? static_cast<std::size_t>(cli::parse_number(*bucket_mb, "--bucket-mb", 0.0, 4096.0) * 1048576.0)
                  : train::TrainerConfig{}.bucket_bytes;
    set_num_threads(thread_counts.front());
    return bench_ranks(static_cast<int>(*ranks), compute, p, n, shape, bucket_bytes, zero == "1" ? 1 : 0, json);
  }
  if (bucket_mb || zero) cli::usage_fail("--bucket-mb and --zero need --ranks");
  const std::string peer_kind = peer.value_or("pytorch");
  for (const int threads : thread_counts) {
    set_num_threads(threads);
    if (json) {
      print_json(p, threads, n, peer_kind, shape);
      continue;
    }
    std::printf(
        "bench train: GPT width %lld, depth %lld, %lld heads, context %lld, batch %lld on %s; %s compute, %d "
        "threads, %lld timed steps (medians)\n",
        static_cast<long long>(shape.width), static_cast<long long>(shape.depth), static_cast<long long>(shape.heads),
        static_cast<long long>(shape.context), static_cast<long long>(shape.batch), shape.cuda ? "cuda:0" : "the cpu",
        p.c_str(), num_threads(), static_cast<long long>(n));
    const Measured fused = measure(compute, true, n, shape), unfused = measure(compute, false, n, shape);
    const Ceiling ceiling = measure_ceiling(shape, compute, threads);
    std::printf("\n%-16s %10s %10s %10s %8s %12s %14s %8s\n", "graph", "step ms", "nodes ms", "rest ms", "rest %",
                "tokens/s", "heap growth B", "MFU");
    for (const auto& [label, m] : {std::pair<const char*, const Measured&>{"fused", fused}, {"unfused", unfused}}) {
      const double rest = m.step_s - m.nodes_s;
      const double mfu = 1e-12 * shape.model_flops(m.parameters) / m.step_s / ceiling.tflops;
      std::printf("%-16s %10.2f %10.2f %10.2f %7.1f%% %12.0f %14lld %7.1f%%\n", label, 1e3 * m.step_s, 1e3 * m.nodes_s,
                  1e3 * rest, 100.0 * rest / m.step_s, shape.tokens() / m.step_s, m.heap_growth, 100.0 * mfu);
    }
    if (peer_kind != "none") {
      std::string why;
      const std::optional<bench::TorchStep> torch =
          bench::run_torch_train_peer(p, threads, n, peer_options(shape, peer_kind), why);
      if (torch)
        std::printf("%-16s %10.2f %10s %10s %8s %12.0f %14s %7.1f%%   PyTorch %s; ampkit fused is %.2fx its speed\n",
                    peer_kind.c_str(), torch->step_ms, "", "", "", shape.tokens() / (1e-3 * torch->step_ms), "",
                    100.0 * 1e-12 * shape.model_flops(fused.parameters) / (1e-3 * torch->step_ms) / ceiling.tflops,
                    torch->version.c_str(), torch->step_ms / (1e3 * fused.step_s));
      else
        std::printf("%-16s (not measured: %s)\n", peer_kind.c_str(), why.c_str());
    }
    std::printf(
        "\nmodel FLOPs %.3g per step (%lld parameters; 6N + 12 x depth x width x context per token);\n"
        "MFU against %s = %.2f TFLOP/s, measured in this run\n",
        shape.model_flops(fused.parameters), static_cast<long long>(fused.parameters), ceiling.name, ceiling.tflops);
    std::printf("\nfused graph, time per node kind (ms per step, share of the node time):\n");
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [op, s] : fused.per_kind_s) order.push_back({s, op});
    std::sort(order.rbegin(), order.rend());
    for (const auto& [s, op] : order)
      std::printf("  %-28s %8.3f %6.1f%%\n", op.c_str(), 1e3 * s, 100.0 * s / fused.nodes_s);
    std::printf("\n");
  }
  if (!json)
    std::printf(
        "rest = step time - summed node time: the optimizer (AdamW over the fp32 masters), the\n"
        "gradient norm and clipping, loss scaling and the executor's own dispatch (on cuda also the\n"
        "parameter upload and gradient download).\n");
  return 0;
}

}  // namespace ampkit::tools
