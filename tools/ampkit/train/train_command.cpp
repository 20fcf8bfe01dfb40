// `ampkit train` (tools layer, train/): parses the options (or resumes a checkpoint and merges
// them), checks every output path and the data up front, builds the model (graph_model.cpp),
// runs the loop (train_run.cpp) and prints what the run reached: validation loss and perplexity
// against the unigram baseline, throughput, the fp16 numerics and loss-scale history, samples.
// Under mpirun (more than one rank) the ranks train one data-parallel run: rank 0 alone prints
// and writes; a setup that fails on any rank ends every rank with the first failure's message
// and exit code (docs/TRAIN.md "Scaling out").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/dist/communicator.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "ampkit/train/corpus.hpp"
#include "ampkit/train/files.hpp"
#include "tools/ampkit/cli/dispatch.hpp"
#include "tools/ampkit/commands.hpp"
#include "tools/ampkit/common/json_line.hpp"
#include "tools/ampkit/common/memory.hpp"
#include "tools/ampkit/common/progress.hpp"
#include "tools/ampkit/train/config.hpp"
#include "tools/ampkit/train/init_from.hpp"
#include "tools/ampkit/train/model.hpp"
#include "tools/ampkit/train/run_checkpoint.hpp"
#include "tools/ampkit/train/train_run.hpp"

namespace ampkit::tools {
namespace {

using namespace train;

std::string bench_number(double v) { return tools::json_number(v); }

// "3e-3", "0.1", "1": three significant digits.
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// "1 thread", "2 threads".
std::string count_of(std::int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// Parameters, optimizer state, gradients and activations, roughly: refused up front when they
// cannot fit in the memory available now.
void require_run_memory(const TrainConfig& c, std::int64_t vocab) {
  const double w = static_cast<double>(c.width), d = static_cast<double>(c.depth), v = static_cast<double>(vocab);
  const double rows = static_cast<double>(c.batch) * static_cast<double>(c.context);
  const double params = c.model == ModelKind::gpt ? 2 * v * w + static_cast<double>(c.context) * w + d * 12 * w * w
                                                  : v * w + d * 4 * w * w + 4 * w * v;
  const double attention =
      c.model == ModelKind::gpt ? static_cast<double>(c.heads) * static_cast<double>(c.context) : 0.0;
  const double activations = rows * (d * (24 * w + 2 * attention) + 3 * v);
  tools::require_memory("train", "--width, --depth, --batch and --context", 4.0 * (5 * params + 2 * activations));
}

std::vector<std::string> data_paths(const TrainConfig& c) {
  if (!c.data.empty()) return {c.data};
  require_default_corpus();
  return default_corpus_paths();
}

void print_samples(const RunSummary& s, const TrainConfig& c) {
  if (s.samples.empty()) return;
  std::printf("\nsamples (temperature %s, top-k %s, seed %llu):\n", fixed(c.temperature, 2).c_str(),
              c.top_k > 0 ? std::to_string(c.top_k).c_str() : "all", static_cast<unsigned long long>(c.seed));
  for (const std::string& text : s.samples) {
    std::string block = "  | ";
    for (const char ch : text) block += ch == '\n' ? std::string("\n  | ") : std::string(1, ch);
    std::printf("%s\n\n", block.c_str());
  }
}

// One cell of the per-layer table: "flush 12 / 0" (mode, subnormal inputs / outputs).
std::string fp16_pass_cell(const Fp16LayerCounters::Pass& p) {
  if (!p.ran) return "-";
  return std::string(fp16_mode_name(p.mode)) + " " + std::to_string(p.subnormal_inputs) + " / " +
         std::to_string(p.subnormal_outputs);
}

void print_fp16_layers(const std::vector<Fp16LayerCounters>& layers) {
  if (layers.empty()) return;
  std::printf(
      "  per layer, over the training steps: mode, then subnormal fp16 GEMM inputs / outputs (flushed\n"
      "  under flush; under exact and alt, what an MI200 would have flushed):\n");
  std::size_t width = 5;
  for (const Fp16LayerCounters& l : layers) width = std::max(width, l.layer.size());
  std::printf("    %-*s  %-24s  %s\n", static_cast<int>(width), "layer", "forward", "backward");
  for (const Fp16LayerCounters& l : layers)
    std::printf("    %-*s  %-24s  %s\n", static_cast<int>(width), l.layer.c_str(), fp16_pass_cell(l.forward).c_str(),
                fp16_pass_cell(l.backward).c_str());
}

void print_fp16_report(const RunSummary& s, const TrainConfig& c, double final_scale) {
  if (c.precision != Precision::fp16) return;
  const Fp16Counters n = fp16_counters();
  std::printf("fp16 numerics (%s model, alternate GEMM %s):", std::string(fp16_model_option(c.fp16_model)).c_str(),
              std::string(fp16_alt_option(c.fp16_alt)).c_str());
  if (n.gemm_calls() == 0) {
    std::printf(" no fp16 GEMM was counted (the runtime reports none to the fp16 policy's counters)\n");
  } else {
    std::printf(" %lld fp16 GEMMs (exact %lld, flush %lld, alt %lld)\n", static_cast<long long>(n.gemm_calls()),
                static_cast<long long>(n.exact.gemm_calls), static_cast<long long>(n.flush.gemm_calls),
                static_cast<long long>(n.alt.gemm_calls));
    std::printf("  subnormal fp16 GEMM inputs: %lld flushed to zero, %lld more that an MI200 would have flushed\n",
                static_cast<long long>(n.subnormal_inputs_flushed()),
                static_cast<long long>(n.subnormal_inputs_would_flush()));
    std::printf("  subnormal fp16 GEMM outputs: %lld flushed to zero, %lld more that an MI200 would have flushed\n",
                static_cast<long long>(n.subnormal_outputs_flushed()),
                static_cast<long long>(n.subnormal_outputs_would_flush()));
  }
  std::string history = "  loss scale (" + c.loss_scale.text() + "): " + bench_number(final_scale) + " at the end";
  if (s.loss_scale_changes.empty()) history += ", unchanged in this run";
  for (std::size_t i = 0; i < s.loss_scale_changes.size() && i < 12; ++i)
    history.append(i ? ", " : "; changed to ")
        .append(bench_number(s.loss_scale_changes[i].scale))
        .append(" at step ")
        .append(std::to_string(s.loss_scale_changes[i].step));
  if (s.loss_scale_changes.size() > 12)
    history += ", ... (" + std::to_string(s.loss_scale_changes.size()) + " changes)";
  std::printf("%s; %s skipped for non-finite gradients\n", history.c_str(),
              count_of(s.skipped_steps, "step", "steps").c_str());
}

// Everything a run needs, prepared (and checked) before the first step.
struct PreparedRun {
  TrainOptions options;
  std::optional<TrainCheckpoint> resumed;
  std::vector<std::string> notes, paths;
  Corpus corpus;
  std::string data_name;
  std::unique_ptr<GraphModel> model;
};

// Parses, loads and checks everything and builds the model; nullopt when --help was printed.
// `comm` (null: one process) is the data-parallel group: rank r builds a model of
// batch / ranks rows, and only rank 0 keeps the outputs (log, plot, checkpoint).
std::optional<PreparedRun> prepare_run(const Args& args, dist::Communicator* comm) {
  std::optional<TrainOptions> parsed = parse_train_options(args);
  if (!parsed) return std::nullopt;
  PreparedRun p;
  p.options = std::move(*parsed);
  if (p.options.config.resume) {
    p.resumed = load_run_checkpoint(*p.options.config.resume);
    merge_resumed_config(p.options, p.resumed->config, &p.notes);
  }
  TrainConfig& c = p.options.config;
  const int ranks = comm ? comm->size() : 1;
  if (ranks > 1) {
    if (c.batch % ranks != 0)
      throw cli::UsageError(detail::concat("--batch ", c.batch, " is the global batch, split over the ", ranks,
                                           " ranks: it must be a multiple of ", ranks));
    if (c.cuda)
      throw Error(detail::concat("--device cuda: a run over ", ranks, " ranks trains on the cpu only"),
                  ErrorKind::unsupported);
    // Rank 0 writes; every rank keeps --checkpoint, so that all of them reach the checkpoint
    // steps together (ZeRO-1 gathers the optimizer state there), but only rank 0 writes it.
    if (comm->rank() != 0) c.log.reset(), c.plot.reset();
  }
  // Outputs are checked before minutes of training, not after.
  if (c.log) check_output_path(*c.log, "--log");
  if (c.plot) check_output_path(*c.plot, "--plot");
  if (c.checkpoint) check_output_path(*c.checkpoint, "--checkpoint");
  if (c.keep_best) check_output_path(*c.keep_best, "--keep-best");

  p.paths = data_paths(c);
  p.corpus = load_corpus(p.paths);
  const Corpus& corpus = p.corpus;
  p.data_name = c.data.empty() ? std::string(kDefaultCorpusFolder) : c.data;
  const std::string& data_name = p.data_name;
  for (const auto& [part, stream] : {std::pair{"training", &corpus.train}, std::pair{"validation", &corpus.validation}})
    if (static_cast<std::int64_t>(stream->size()) < c.context + 1)
      throw Error(detail::concat(data_name, ": the ", part, " text has ", stream->size(), " characters, but --context ",
                                 c.context, " needs at least ", c.context + 1, " (", corpus.split,
                                 "): give more text or a smaller --context"));
  if (p.resumed) {
    const std::string what = "--resume '" + *c.resume + "'";
    if (p.resumed->data_fingerprint != corpus.fingerprint)
      throw Error(detail::concat(what, ": the training text ", data_name,
                                 " is not the text the checkpoint was trained on (its contents changed)"));
    if (!(p.resumed->vocabulary == corpus.vocabulary))
      throw Error(detail::concat(what, ": the checkpoint's vocabulary differs from the data's"));
  }
  if (c.threads > 0) set_num_threads(c.threads);
  if (c.cuda) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) throw Error(detail::concat("--device cuda: ", why), ErrorKind::unsupported);
  }
  if (c.precision == Precision::fp16) {
    set_fp16_device_model(c.fp16_model);
    set_gemm_fp16_alt_impl(c.fp16_alt);
  }
  TrainConfig local = c;  // this rank's rows
  local.batch = c.batch / ranks;
  require_run_memory(local, corpus.vocabulary.size());
  p.model = make_graph_model(local, corpus.vocabulary.size(), ranks > 1 ? comm : nullptr);
  if (p.resumed)
    check_checkpoint_tensors(*p.resumed, trainer_tensor_specs(p.model->trainer()), "--resume '" + *c.resume + "'");
  if (c.init_from) init_weights_from(p.model->trainer(), *c.init_from, corpus.vocabulary);
  return p;
}

// Trains the prepared run and prints the report (rank 0's stdout; the other ranks' is /dev/null).
int train_and_report(PreparedRun& p, RankSlice slice) {
  const TrainConfig& c = p.options.config;
  const Corpus& corpus = p.corpus;
  const std::vector<std::string>& paths = p.paths;
  const std::unique_ptr<GraphModel>& model = p.model;
  const double baseline = unigram_baseline(corpus);
  std::printf("ampkit train: %s\n",
              describe_model(c, corpus.vocabulary.size(), model->trainer().parameter_count()).c_str());
  std::printf(
      "  %s compute, fp32 master weights; AdamW lr %s (warm-up %s, cosine to %s), weight decay %s, clip %s; "
      "batch %lld x %lld, %s, seed %llu, %s\n",
      std::string(precision_name(c.precision)).c_str(), short_number(c.lr).c_str(),
      count_of(c.warmup, "step", "steps").c_str(), short_number(c.lr / 10).c_str(),
      short_number(c.weight_decay).c_str(), c.clip > 0 ? short_number(c.clip).c_str() : "off",
      static_cast<long long>(c.batch), static_cast<long long>(c.context), count_of(c.steps, "step", "steps").c_str(),
      static_cast<unsigned long long>(c.seed), count_of(num_threads(), "thread", "threads").c_str());
  if (slice.ranks > 1)
    std::printf("  data parallel: %d ranks (mpi), %lld rows each, gradients summed in rank order\n", slice.ranks,
                static_cast<long long>(c.batch / slice.ranks));
  if (c.cuda) std::printf("  device: cuda:0, %s\n", cuda_device_description(0).c_str());
  std::printf("  data: %s (%zu file%s, %s bytes, %lld distinct characters): %s train and %s validation tokens; %s\n",
              p.data_name.c_str(), paths.size(), paths.size() == 1 ? "" : "s",
              format_count(static_cast<double>(corpus.bytes)).c_str(), static_cast<long long>(corpus.vocabulary.size()),
              format_count(static_cast<double>(corpus.train.size())).c_str(),
              format_count(static_cast<double>(corpus.validation.size())).c_str(), corpus.split.c_str());
  std::printf("  unigram baseline: %s nats per character (the loss of a model that ignores context)\n",
              fixed(baseline, 4).c_str());
  if (p.resumed) {
    std::printf("  resuming %s at step %lld\n", c.resume->c_str(), static_cast<long long>(p.resumed->step));
    for (const std::string& n : p.notes)
      std::printf("  note: %s: the loss no longer follows the saved run's\n", n.c_str());
  }
  std::fflush(stdout);

  reset_fp16_counters();
  RunIo io;
  if (slice.rank == 0) {
    io.live = is_terminal(stderr);
    io.columns = io.live ? terminal_columns(stderr) : 0;
  } else {
    io.progress = stdout;  // /dev/null
  }
  const RunSummary s = run_training(*model, corpus, c, p.resumed ? &*p.resumed : nullptr, io, slice);
  if (slice.rank != 0) return 0;

  const std::int64_t tokens = (s.steps - s.first_step) * c.batch * c.context;
  std::printf(
      "\nvalidation loss %s nats per character, perplexity %s (unigram baseline %s, perplexity %s) after %lld steps\n",
      fixed(s.validation_loss, 4).c_str(), fixed(std::exp(s.validation_loss), 2).c_str(), fixed(baseline, 4).c_str(),
      fixed(std::exp(baseline), 2).c_str(), static_cast<long long>(s.steps));
  std::printf("throughput: %s tokens/s (%s tokens in %s of training steps, %s)\n",
              format_count(s.tokens_per_second).c_str(), format_count(static_cast<double>(tokens)).c_str(),
              format_duration(s.train_seconds).c_str(), count_of(num_threads(), "thread", "threads").c_str());
  print_fp16_report(s, c, model->loss_scale());
  if (c.precision == Precision::fp16) print_fp16_layers(fp16_layers(model->trainer()));
  if (c.log) std::printf("log: %s\n", c.log->c_str());
  if (c.plot) std::printf("plot: %s\n", c.plot->c_str());
  if (c.checkpoint) std::printf("checkpoint: %s (step %lld)\n", c.checkpoint->c_str(), static_cast<long long>(s.steps));
  print_samples(s, c);
  return 0;
}

// Runs on every rank of `comm` (size > 1): each prepares; one all_gather of the ranks' exit
// statuses decides whether all can train, so a failed setup never leaves a peer waiting. The
// first failing rank in rank order reports (its exception, in `failure`, goes on to the top
// level's message and exit code once the communicator is gone); the others return the same code
// silently. A failure while training ends the job through the communicator
// (abort_job_on_error: the failing rank's message, MPI_Abort).
int run_train_ranks(const Args& args, dist::Communicator& comm, std::exception_ptr& failure) {
  if (comm.rank() != 0 && std::freopen("/dev/null", "w", stdout) == nullptr)
    throw Error("ampkit train: cannot redirect the output of rank " + std::to_string(comm.rank()));
  std::optional<PreparedRun> p;
  std::exception_ptr mine;
  std::int32_t status = cli::kExitOk;
  try {
    p = prepare_run(args, &comm);
  } catch (const cli::UsageError&) {
    mine = std::current_exception();
    status = cli::kExitUsage;
  } catch (const Error& e) {
    mine = std::current_exception();
    status = cli::exit_code(e.kind());
  } catch (...) {
    mine = std::current_exception();
    status = cli::kExitInternal;
  }
  std::vector<std::int32_t> statuses(static_cast<std::size_t>(comm.size()));
  comm.all_gather(&status, statuses.data(), 1, DType::i32);
  for (int r = 0; r < comm.size(); ++r) {
    const std::int32_t code = statuses[static_cast<std::size_t>(r)];
    if (code == cli::kExitOk) continue;
    if (r == comm.rank()) {
      if (r != 0) std::fprintf(stderr, "ampkit train: rank %d of %d failed to start:\n", r, comm.size());
      failure = mine;
    }
    return code;
  }
  if (!p) return cli::kExitOk;  // --help (rank 0 printed it)
  return dist::abort_job_on_error(comm, [&] { return train_and_report(*p, {comm.rank(), comm.size()}); });
}

}  // namespace

int run_train(const Args& args) {
  // An exception leaves only once the communicator is gone: the MPI one, destroyed while an
  // exception unwinds, would end the job instead of letting the top level report it.
  std::exception_ptr failure;
  int code = 0;
  {
    const std::unique_ptr<dist::Communicator> comm = dist::make_process_communicator();
    try {
      if (comm->size() > 1) {
        code = run_train_ranks(args, *comm, failure);
      } else {
        std::optional<PreparedRun> p = prepare_run(args, nullptr);
        code = p ? train_and_report(*p, {}) : 0;
      }
    } catch (...) {
      failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return code;
}

}  // namespace ampkit::tools
