// The training loop of `ampkit train` (tools layer, train/). See train_run.hpp.
#include "tools/ampkit/train/train_run.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>

#include "ampkit/core/error.hpp"
#include "ampkit/train/sampler.hpp"
#include "ampkit/train/schedule.hpp"
#include "tools/ampkit/common/json_line.hpp"
#include "tools/ampkit/common/loss_plot.hpp"
#include "tools/ampkit/common/progress.hpp"
#include "tools/ampkit/train/log_header.hpp"

namespace ampkit::tools::train {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};

double mean_validation_loss(TrainModel& model, const std::vector<Batch>& batches) {
  double sum = 0.0;
  for (const Batch& b : batches) sum += model.evaluate(b);
  return sum / static_cast<double>(batches.size());
}

std::string plot_title(const TrainConfig& c) {
  const char* unit = c.model == ModelKind::gpt ? (c.depth == 1 ? " block" : " blocks")
                                               : (c.depth == 1 ? " hidden layer" : " hidden layers");
  std::string t = std::string(model_kind_name(c.model)) + ", " + std::to_string(c.depth) + unit + ", width " +
                  std::to_string(c.width) + ", " + std::string(precision_name(c.precision));
  if (c.precision == Precision::fp16)
    t += " (" + std::string(fp16_model_option(c.fp16_model)) + ", alt " + std::string(fp16_alt_option(c.fp16_alt)) +
         ", loss scale " + c.loss_scale.text() + ")";
  return t + ", seed " + std::to_string(c.seed);
}

}  // namespace

TrainCheckpoint make_checkpoint(TrainModel& model, const Corpus& corpus, const TrainConfig& config, std::int64_t step,
                                std::uint64_t data_rng, const std::vector<CurvePoint>& train_curve,
                                const std::vector<CurvePoint>& validation_curve) {
  TrainCheckpoint c;
  c.config = config;
  c.step = step;
  c.data_rng = data_rng;
  c.vocabulary = corpus.vocabulary;
  c.data_fingerprint = corpus.fingerprint;
  c.train_curve = train_curve;
  c.validation_curve = validation_curve;
  model.save_state(c);  // tensors, optimizer step count, loss-scale state
  return c;
}

std::vector<std::string> sample_texts(TrainModel& model, const Vocabulary& vocabulary, std::int64_t count,
                                      std::int64_t length, double temperature, std::int64_t top_k, std::uint64_t seed,
                                      std::span<const std::int32_t> prompt) {
  const std::int64_t rows = model.rows(), context = model.context(), vocab = model.vocab();
  count = std::min(count, rows);
  if (count <= 0 || length <= 0) return {};
  const std::int32_t newline = vocabulary.id(U'\n');
  const std::int32_t start = newline >= 0 ? newline : 0;
  std::vector<std::vector<std::int32_t>> texts(static_cast<std::size_t>(count));
  std::vector<bool> done(static_cast<std::size_t>(count), false);
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(rows * context), start);
  std::vector<float> logits(static_cast<std::size_t>(rows * context * vocab));
  std::vector<std::int64_t> position(static_cast<std::size_t>(count));
  Sampler sampler(temperature, top_k, seed);
  for (std::int64_t t = 0; t < length; ++t) {
    if (std::all_of(done.begin(), done.end(), [](bool d) { return d; })) break;
    for (std::int64_t r = 0; r < count; ++r) {
      // The row's context: the start token, the prompt and the text so far, its last `context`
      // tokens.
      std::vector<std::int32_t> seq{start};
      seq.insert(seq.end(), prompt.begin(), prompt.end());
      const auto& text = texts[static_cast<std::size_t>(r)];
      seq.insert(seq.end(), text.begin(), text.end());
      const std::int64_t n = std::min<std::int64_t>(context, static_cast<std::int64_t>(seq.size()));
      std::int32_t* row = tokens.data() + r * context;
      std::fill(row, row + context, start);
      std::copy(seq.end() - n, seq.end(), row);
      position[static_cast<std::size_t>(r)] = n - 1;
    }
    model.logits(tokens, logits);
    for (std::int64_t r = 0; r < count; ++r) {
      if (done[static_cast<std::size_t>(r)]) continue;
      const float* l = logits.data() + (r * context + position[static_cast<std::size_t>(r)]) * vocab;
      auto& text = texts[static_cast<std::size_t>(r)];
      text.push_back(sampler.next({l, static_cast<std::size_t>(vocab)}));
      const std::size_t m = text.size();
      if (newline >= 0 && m >= 2 && text[m - 1] == newline && text[m - 2] == newline) {
        text.resize(m - 2);  // a blank line ends a document
        done[static_cast<std::size_t>(r)] = true;
      }
    }
  }
  std::vector<std::string> out;
  for (const auto& text : texts) out.push_back(vocabulary.decode(text));
  return out;
}

RunSummary run_training(TrainModel& model, const Corpus& corpus, const TrainConfig& config,
                        const TrainCheckpoint* resume, const RunIo& io, RankSlice slice) {
  const std::int64_t rows = config.batch / slice.ranks;  // this rank's
  const bool writer = slice.rank == 0;
  if (model.vocab() != corpus.vocabulary.size() || model.rows() != rows || rows * slice.ranks != config.batch ||
      model.context() != config.context)
    throw Error(detail::concat("run_training: the model (vocab ", model.vocab(), ", rows ", model.rows(), ", context ",
                               model.context(), ") does not match the corpus and configuration (vocab ",
                               corpus.vocabulary.size(), ", batch ", config.batch, ", context ", config.context, ")"));
  const auto start_time = std::chrono::steady_clock::now();
  const std::function<double()> clock = io.clock ? io.clock : [start_time] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time).count();
  };
  RunSummary summary;
  BatchSampler sampler(corpus.train, config.batch, config.context, config.seed);
  const std::vector<Batch> validation =
      writer ? validation_batches(corpus.validation, rows, config.context, kValidationTokens) : std::vector<Batch>{};
  const LrSchedule schedule{config.lr, config.warmup, config.steps};
  std::int64_t step = 0;
  if (resume) {
    model.restore_state(*resume, "the resumed checkpoint");
    sampler.set_state(resume->data_rng);
    step = resume->step;
    summary.train_curve = resume->train_curve;
    summary.validation_curve = resume->validation_curve;
  }
  summary.first_step = step;
  summary.steps = std::max(step, config.steps);

  const LossCurves plot_base{plot_title(config), {}, {}, unigram_baseline(corpus)};
  auto write_plot = [&] {
    if (!config.plot || !writer) return;
    LossCurves curves = plot_base;
    curves.train = summary.train_curve;
    curves.validation = summary.validation_curve;
    write_loss_svg(*config.plot, curves);
  };
  auto evaluate = [&](std::int64_t at) {
    if (!writer) return static_cast<double>(NAN);
    const double loss = mean_validation_loss(model, validation);
    summary.validation_curve.push_back({at, loss});
    write_plot();
    return loss;
  };
  auto save_to = [&](const std::string& path, std::int64_t at) {
    model.gather_state();  // every rank (ZeRO-1's collective)
    if (!writer) return;
    save_run_checkpoint(path, make_checkpoint(model, corpus, config, at, sampler.state(), summary.train_curve,
                                              summary.validation_curve));
    if (io.after_checkpoint) io.after_checkpoint(at, path);
  };
  auto save = [&](std::int64_t at) {
    if (config.checkpoint) save_to(*config.checkpoint, at);
  };
  // --keep-best: the lowest validation loss after step 0 so far (a resumed run's curve included).
  if (config.keep_best && slice.ranks > 1)
    throw Error(detail::concat("--keep-best '", *config.keep_best, "': runs in one process only (over ", slice.ranks,
                               " ranks only rank 0 knows the validation loss)"),
                ErrorKind::unsupported);
  double best_loss = INFINITY;
  for (const auto& point : summary.validation_curve)
    if (point.step > 0) best_loss = std::min(best_loss, point.loss);

  Progress progress(io.progress, io.live, step, summary.steps, std::max<std::int64_t>(1, summary.steps / 20),
                    io.columns);
  if (step == 0) {
    const double loss = evaluate(0);
    progress.note(detail::concat("step 0: validation loss ", tools::json_number(std::round(loss * 1e4) / 1e4)));
  }
  // The log is opened once the model has run (the first evaluation), so that a run refused by
  // the model leaves an existing log as it was.
  std::unique_ptr<std::FILE, FileCloser> log;
  if (config.log && writer) {
    log.reset(std::fopen(config.log->c_str(), "w"));
    if (!log) throw Error(detail::concat("--log '", *config.log, "': cannot open it: ", std::strerror(errno)));
    std::fprintf(log.get(), "%s\n", log_header_line(config, step, slice.ranks).c_str());
  }
  double last_scale = resume ? resume->loss_scale.scale : model.loss_scale();
  const double loop_start = clock();
  Batch batch, global;  // global: the whole step's rows, when there are several ranks
  std::int64_t tokens = 0;
  for (; step < config.steps;) {
    const double lr = schedule.at(step);
    if (slice.ranks == 1) {
      sampler.next(batch);
    } else {
      sampler.next(global);
      const auto n = static_cast<std::size_t>(rows * config.context);
      const auto first = global.tokens.begin() + static_cast<std::ptrdiff_t>(slice.rank * n);
      const auto first_target = global.targets.begin() + static_cast<std::ptrdiff_t>(slice.rank * n);
      batch.rows = rows;
      batch.context = config.context;
      batch.tokens.assign(first, first + static_cast<std::ptrdiff_t>(n));
      batch.targets.assign(first_target, first_target + static_cast<std::ptrdiff_t>(n));
    }
    const double t0 = clock();
    const ModelStep r = model.step(batch, lr);
    const double t1 = clock();
    summary.train_seconds += t1 - t0;
    tokens += batch.rows * batch.context * slice.ranks;
    ++step;
    if (!r.skipped && !std::isfinite(r.loss))
      throw Error(detail::concat("the training loss became ", r.loss, " at step ", step,
                                 ": the run diverged (try a lower --lr, or --clip)"));
    summary.skipped_steps += r.skipped;
    if (r.loss_scale != last_scale) {
      summary.loss_scale_changes.push_back({step, r.loss_scale});
      last_scale = r.loss_scale;
    }
    summary.train_curve.push_back({step, r.loss});
    const double tokens_per_second =
        summary.train_seconds > 0 ? static_cast<double>(tokens) / summary.train_seconds : 0.0;
    const bool eval_now = step == config.steps || (config.eval_every > 0 && step % config.eval_every == 0);
    double validation_loss = NAN;
    if (eval_now) validation_loss = evaluate(step);
    if (log) {
      tools::JsonLine line;
      line.add("step", step)
          .add("loss", r.loss)
          .add("lr", lr)
          .add("grad_norm", r.grad_norm)
          .add("loss_scale", r.loss_scale)
          .add("skipped", r.skipped)
          .add("step_ms", 1e3 * (t1 - t0))
          .add("tokens_per_s", tokens_per_second)
          .add("elapsed_s", clock());
      if (eval_now) line.add("validation_loss", validation_loss);
      std::fprintf(log.get(), "%s\n", line.str().c_str());
      std::fflush(log.get());
    }
    progress.update(step, r.loss, tokens_per_second, clock() - loop_start);  // wall time: evaluations included
    if (eval_now)
      progress.note(detail::concat("step ", step, ": validation loss ",
                                   tools::json_number(std::round(validation_loss * 1e4) / 1e4)));
    if (config.checkpoint &&
        (step == config.steps || (config.checkpoint_every > 0 && step % config.checkpoint_every == 0)))
      save(step);
    if (config.keep_best && eval_now && validation_loss < best_loss) {
      best_loss = validation_loss;
      save_to(*config.keep_best, step);
    }
  }
  progress.finish();
  if (!writer) return summary;
  if (summary.validation_curve.empty() || summary.validation_curve.back().step != step) evaluate(step);
  if (log && std::ferror(log.get()))
    throw Error(detail::concat("--log '", *config.log, "': a write failed (disk full?)"));
  summary.validation_loss = summary.validation_curve.back().loss;
  summary.tokens_per_second = summary.train_seconds > 0 ? static_cast<double>(tokens) / summary.train_seconds : 0.0;
  summary.samples =
      sample_texts(model, corpus.vocabulary, config.sample_tokens > 0 ? kSamples : 0, config.sample_tokens,
                   config.temperature, config.top_k, config.seed ^ 0x73616d706c65ull);
  return summary;
}

}  // namespace ampkit::tools::train
