// The training loop of `ampkit train` (tools layer, train/), over any TrainModel (model.hpp, the loop's seam): resume,
// steps on seeded batches with the warm-up + cosine rate, the per-step JSON log, progress, periodic validation, the SVG
// plot, periodic atomic checkpoints, and at the end the validation loss, perplexity, throughput and sampled text.
// train_command.cpp builds the pieces and calls it; the tests call it with a small exact model (bitwise resume, log,
// plot, checkpoint cadence).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "ampkit/train/corpus.hpp"
#include "tools/ampkit/train/config.hpp"
#include "tools/ampkit/train/model.hpp"
#include "tools/ampkit/train/run_checkpoint.hpp"

namespace ampkit::tools::train {

/// Tokens of validation text per evaluation (spread evenly over the validation stream).
constexpr std::int64_t kValidationTokens = 32768;
/// Texts sampled at the end (each up to --sample-tokens characters, ending early at a blank line).
constexpr std::int64_t kSamples = 3;

/// Where the loop writes, and hooks for tests.
struct RunIo {
  std::FILE* report = stdout;     // evaluations, the summary, samples
  std::FILE* progress = stderr;   // the progress bar or lines
  bool live = false;              // progress as a live line ('\r')
  int columns = 0;                // width of the live line (0: any)
  std::function<double()> clock;  // seconds, monotonic; empty: std::chrono::steady_clock
  /// Called after each checkpoint is saved, with the step and the path.
  std::function<void(std::int64_t, const std::string&)> after_checkpoint;
};

/// This process's place in a data-parallel run (docs/TRAIN.md "Scaling out"): config.batch is the
/// global batch, drawn as one stream (the sampler of one process at config.batch rows) of which
/// rank r trains on rows [r * B, (r + 1) * B), B = config.batch / ranks (the model's rows()).
/// Rank 0 alone evaluates, logs, plots, saves checkpoints and samples; the others only train.
struct RankSlice {
  int rank = 0;
  int ranks = 1;
};

/// A change of the loss scale (fp16).
struct LossScaleChange {
  std::int64_t step = 0;
  double scale = 1.0;
};

struct RunSummary {
  std::int64_t first_step = 0, steps = 0;                 // this process ran steps first_step+1 .. steps
  double validation_loss = 0.0;                           // at the last step
  double train_seconds = 0.0;                             // in model.step only
  double tokens_per_second = 0.0;                         // training tokens / train_seconds
  std::int64_t skipped_steps = 0;                         // in this process
  std::vector<CurvePoint> train_curve, validation_curve;  // the whole run's, resumed part included
  std::vector<LossScaleChange> loss_scale_changes;        // in this process
  std::vector<std::string> samples;
};

/// Runs `config` on `model` and `corpus`. With `resume`, continues from it (its tensors, step,
/// optimizer step count, loss-scale state, data-order state and curves; the caller has checked
/// that it matches the model, the vocabulary and the data). Throws ampkit::Error on an
/// unwritable output or a diverged run (a non-finite loss on a step that was not skipped).
RunSummary run_training(TrainModel& model, const Corpus& corpus, const TrainConfig& config,
                        const TrainCheckpoint* resume, const RunIo& io, RankSlice slice = {});

/// The checkpoint of the model's state now (for run_training and tests).
TrainCheckpoint make_checkpoint(TrainModel& model, const Corpus& corpus, const TrainConfig& config, std::int64_t step,
                                std::uint64_t data_rng, const std::vector<CurvePoint>& train_curve,
                                const std::vector<CurvePoint>& validation_curve);

/// Samples `count` (<= model.rows()) texts of at most `length` characters from `model`, each
/// continuing a newline and then `prompt`, and ending early at a blank line; the prompt is not
/// part of the returned texts. Deterministic for a seed.
std::vector<std::string> sample_texts(TrainModel& model, const Vocabulary& vocabulary, std::int64_t count,
                                      std::int64_t length, double temperature, std::int64_t top_k, std::uint64_t seed,
                                      std::span<const std::int32_t> prompt = {});

}  // namespace ampkit::tools::train
