// The configuration of an `ampkit train` run (tools layer, train/): every option with its
// default, parsed with the CLI's OptionParser and checked (each bad value or combination is a
// UsageError, exit code 2); the part a checkpoint stores, as JSON, and the rule that merges a
// resumed run's options with the saved ones.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ampkit/numerics/fp16_policy.hpp"
#include "tools/ampkit/cli/options.hpp"

namespace ampkit::tools::train {

enum class ModelKind : std::uint8_t { gpt, mlp };
enum class Precision : std::uint8_t { fp32, bf16, fp16 };

std::string_view model_kind_name(ModelKind m);          // "gpt", "mlp"
std::string_view precision_name(Precision p);           // "fp32", "bf16", "fp16"
std::string_view fp16_model_option(Fp16DeviceModel m);  // "exact", "mi200" (the --fp16-model spelling)
std::string_view fp16_alt_option(AltImplChoice c);      // "auto", "on", "off" (the --fp16-alt spelling)

/// --loss-scale: dynamic (the fp16 default), a fixed scale, or off (scale 1, never changes).
struct LossScaleSetting {
  enum class Mode : std::uint8_t { dynamic, fixed, off };
  Mode mode = Mode::off;
  double value = 1.0;  // the fixed scale
  /// "dynamic", "off" or the number ("1024").
  std::string text() const;
  bool operator==(const LossScaleSetting&) const = default;
};
/// Parses "dynamic", "off" or a positive finite number (at most 2^24); throws cli::UsageError.
LossScaleSetting parse_loss_scale(std::string_view text);

struct TrainConfig {
  // The model (a checkpoint must match these).
  ModelKind model = ModelKind::gpt;
  std::int64_t width = 128;   // model dimension
  std::int64_t heads = 4;     // attention heads (gpt); width must be a multiple
  std::int64_t depth = 2;     // transformer blocks (gpt) or hidden layers (mlp)
  std::int64_t context = 64;  // tokens per sequence
  // Training.
  std::int64_t batch = 32;
  std::int64_t steps = 1000;
  double lr = 3e-3;
  std::int64_t warmup = 100;
  double weight_decay = 0.1;
  double clip = 1.0;       // global gradient-norm clip; 0: none
  std::uint64_t seed = 1;  // parameters and data order
  Precision precision = Precision::bf16;
  Fp16DeviceModel fp16_model = Fp16DeviceModel::cpu;  // --fp16-model exact|mi200
  AltImplChoice fp16_alt = AltImplChoice::per_pass;   // --fp16-alt auto|on|off
  LossScaleSetting loss_scale;                        // dynamic by default for fp16, else off
  std::string data;                                   // --data FILE; empty: the default corpus
  // The run (not stored in a checkpoint).
  int threads = 0;                      // 0: ampkit's default (OMP_NUM_THREADS or the core count)
  bool cuda = false;                    // --device cuda: the graph runs on GPU 0 (docs/TRAIN.md)
  int zero = 0;                         // --zero 1: ZeRO-1 over several ranks
  double bucket_mb = 0.25;              // over N ranks: gradient buckets of this many MiB; 0: one
  std::int64_t eval_every = 100;        // 0: only at the end
  std::int64_t checkpoint_every = 250;  // with --checkpoint; 0: only at the end
  std::optional<std::string> log, plot, checkpoint, resume;
  std::optional<std::string> keep_best;
  std::optional<std::string> init_from;  // --init-from FILE: starting weights (not stored)  // --keep-best FILE: the
                                         // checkpoint of the best validation loss
  std::int64_t sample_tokens = 200;      // 0: no samples at the end
  double temperature = 0.8;              // 0: greedy
  std::int64_t top_k = 20;               // 0: the whole vocabulary

  /// The MLP's hidden width (4 x width) and the GPT's.
  std::int64_t hidden() const { return 4 * width; }
};

/// A parsed command line: the configuration and the options that were given explicitly (by
/// name, "--width"), which a resumed run keeps over the checkpoint's values.
struct TrainOptions {
  TrainConfig config;
  std::set<std::string> given;
};

/// The --help text's description of `ampkit train`.
extern const char* const kTrainSummary;

/// Parses the command line of `ampkit train`; nullopt after --help (printed to stdout). Throws
/// cli::UsageError for an unknown option, a bad value or a bad combination (the message names
/// the options), e.g. "--width 100 must be a multiple of --heads 3".
std::optional<TrainOptions> parse_train_options(const Args& args);

/// Checks the combinations of `config` (also after a resume merge); throws cli::UsageError.
void check_train_config(const TrainConfig& config, const std::set<std::string>& given);

/// The stored part of `config` as one JSON object (model, training and data fields).
std::string config_to_json(const TrainConfig& config);
/// Reads config_to_json's output; throws ampkit::Error naming `what` and the field on anything
/// missing or malformed.
TrainConfig config_from_json(std::string_view json, std::string_view what);

/// Resuming: `options` are this run's, `saved` the checkpoint's. Options not given on the
/// command line take the saved values. A model option (--model, --width, --heads, --depth,
/// --context) or --data given with a different value is refused (ampkit::Error naming both
/// values, exit 1). Other differences are allowed and described in `notes` (they change the
/// run, so the loss no longer follows the saved run's trajectory).
void merge_resumed_config(TrainOptions& options, const TrainConfig& saved, std::vector<std::string>* notes);

}  // namespace ampkit::tools::train
