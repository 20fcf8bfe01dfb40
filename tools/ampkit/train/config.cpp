// The options of `ampkit train` (tools layer, train/): parsing, checks, the stored JSON form and
// the resume merge. See config.hpp.
#include "tools/ampkit/train/config.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "ampkit/core/error.hpp"
#include "ampkit/train/json.hpp"
#include "tools/ampkit/cli/dispatch.hpp"
#include "tools/ampkit/common/json_line.hpp"

namespace ampkit::tools::train {

using cli::parse_number;
using cli::usage_fail;

const char* const kTrainSummary =
    "Trains a character-level language model on UTF-8 text and shows it learning: a small GPT\n"
    "(or a token MLP) in fp32, bf16 or fp16 mixed precision, AdamW with warm-up and cosine decay.\n"
    "The default text is the fortune cookies of Debian's fortunes package; every 10th document\n"
    "is held out for validation.";

namespace {

constexpr double kMaxLossScale = 16777216.0;  // 2^24

std::string number_text(double v) { return tools::json_number(v); }

}  // namespace

std::string_view model_kind_name(ModelKind m) { return m == ModelKind::gpt ? "gpt" : "mlp"; }
std::string_view precision_name(Precision p) {
  return p == Precision::fp32 ? "fp32" : p == Precision::bf16 ? "bf16" : "fp16";
}
std::string_view fp16_model_option(Fp16DeviceModel m) { return m == Fp16DeviceModel::mi200 ? "mi200" : "exact"; }
std::string_view fp16_alt_option(AltImplChoice c) {
  return c == AltImplChoice::alternate ? "on" : c == AltImplChoice::original ? "off" : "auto";
}

std::string LossScaleSetting::text() const {
  switch (mode) {
    case Mode::dynamic: return "dynamic";
    case Mode::off: return "off";
    case Mode::fixed: return number_text(value);
  }
  return "?";
}

LossScaleSetting parse_loss_scale(std::string_view text) {
  if (text == "dynamic") return {LossScaleSetting::Mode::dynamic, 1.0};
  if (text == "off") return {LossScaleSetting::Mode::off, 1.0};
  double v = 0.0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v) || v <= 0.0 ||
      v > kMaxLossScale)
    usage_fail("--loss-scale expects dynamic, off or a fixed scale in (0, 2^24], but got '", text, "'");
  return {LossScaleSetting::Mode::fixed, v};
}

std::optional<TrainOptions> parse_train_options(const Args& args) {
  std::optional<std::string> device, model, precision, fp16_model, fp16_alt, loss_scale, data, log, plot, checkpoint,
      resume, keep_best, init_from, weight_decay, clip, temperature, bucket_mb, zero;
  std::optional<std::int64_t> width, heads, depth, context, batch, steps, warmup, seed, threads, eval_every,
      checkpoint_every, sample_tokens, top_k;
  std::optional<double> lr;
  cli::OptionParser p("train", kTrainSummary);
  const TrainConfig d;
  p.choice("--model", {"gpt", "mlp"}, &model, "gpt (default) or mlp (per-token MLP)")
      .integer("--width", "N", 8, 4096, &width, "model width (default 128)")
      .integer("--heads", "N", 1, 256, &heads, "attention heads, gpt only; divides --width (default 4)")
      .integer("--depth", "N", 1, 64, &depth, "transformer blocks (gpt) or hidden layers (mlp) (default 2)")
      .integer("--context", "N", 1, 4096, &context, "tokens per training sequence (default 64)")
      .integer("--batch", "N", 1, 4096, &batch, "sequences per step (default 32)")
      .integer("--steps", "N", 1, 100'000'000, &steps, "optimizer steps (default 1000)")
      .positive_number("--lr", "RATE", &lr, "peak learning rate of AdamW (default 3e-3)")
      .integer("--warmup", "N", 0, 100'000'000, &warmup,
               "steps of linear warm-up, then cosine decay to lr/10\n(default 100, at most steps/10)")
      .text("--weight-decay", "W", &weight_decay, "AdamW decoupled weight decay, >= 0 (default 0.1)")
      .text("--clip", "NORM", &clip, "clip the global gradient norm to NORM; 0: off (default 1)")
      .integer("--seed", "N", 0, INT64_MAX, &seed, "parameters and data order (default 1)")
      .choice("--precision", {"fp32", "bf16", "fp16"}, &precision,
              "compute dtype; fp32 master weights always (default bf16)")
      .choice("--fp16-model", {"exact", "mi200"}, &fp16_model,
              "fp16 only: exact CPU fp16 GEMMs, or the MI200 model that\nflushes fp16 subnormals (default exact)")
      .choice("--fp16-alt", {"auto", "on", "off"}, &fp16_alt,
              "fp16 only: the alternate GEMM (bf16 operands) in the backward\npass only (auto), always (on) or "
              "never (off) (default auto)")
      .text("--loss-scale", "dynamic|off|S", &loss_scale, "fp16 only: loss scaling (default dynamic)")
      .integer("--threads", "N", 1, cli::kMaxThreads, &threads, "threads (default OMP_NUM_THREADS or the cores)")
      .text("--bucket-mb", "MB", &bucket_mb,
            "over several ranks (mpirun): gradients are summed in buckets of\nMB megabytes (2^20 bytes), each as soon "
            "as the backward has\nproduced it; 0: one bucket after the backward (default 0.25)")
      .choice("--zero", {"0", "1"}, &zero,
              "over several ranks: 1 shards the optimizer state (ZeRO-1: each\nrank updates 1/N of it; the same "
              "weights) (default 0)")
      .choice("--device", {"cpu", "cuda"}, &device,
              "where the forward and backward graph runs: cpu (default) or\ncuda (GPU 0; master weights and "
              "optimizer stay on the host)")
      .text("--data", "FILE", &data, "UTF-8 text to train on (default: the fortunes package's)")
      .text("--log", "FILE", &log, "write one JSON object per step to FILE")
      .text("--plot", "FILE.svg", &plot, "write the training and validation loss curves to FILE.svg")
      .text("--checkpoint", "FILE", &checkpoint, "save a checkpoint (safetensors) to FILE, periodically and at the end")
      .integer("--checkpoint-every", "N", 0, 100'000'000, &checkpoint_every,
               "steps between checkpoints; 0: only at the end (default steps/4)")
      .text("--resume", "FILE", &resume, "continue the run saved in FILE")
      .text("--init-from", "FILE", &init_from,
            "start from the weights of FILE.safetensors (another run's checkpoint\nor an exported model of "
            "the same shape); optimizer and data start afresh")
      .text("--keep-best", "FILE", &keep_best,
            "at each validation whose loss is the lowest so far (after step 0),\nsave a checkpoint to FILE")
      .integer("--eval-every", "N", 0, 100'000'000, &eval_every,
               "steps between validation losses; 0: only at the end (default steps/10)")
      .integer("--sample-tokens", "N", 0, 100'000, &sample_tokens,
               "characters of sampled text at the end (default 200)")
      .text("--temperature", "T", &temperature, "sampling temperature; 0: greedy (default 0.8)")
      .integer("--top-k", "K", 0, 1'000'000, &top_k, "sample among the K likeliest characters; 0: all (default 20)");
  p.footer(
      "exit codes: 2 for a bad option or value; 1 for a missing, unreadable or non-text --data file,\n"
      "an unwritable output, or a checkpoint that is corrupt or from another model.\n"
      "Checkpoints are safetensors files: tensors whose names hold ':' are optimizer and run state,\n"
      "the others the model's fp32 weights (docs/TRAIN.md).");
  if (!p.parse(args)) return std::nullopt;

  TrainOptions out;
  TrainConfig& c = out.config;
  const std::pair<const char*, bool> present[] = {{"--model", model.has_value()},
                                                  {"--width", width.has_value()},
                                                  {"--heads", heads.has_value()},
                                                  {"--depth", depth.has_value()},
                                                  {"--context", context.has_value()},
                                                  {"--batch", batch.has_value()},
                                                  {"--steps", steps.has_value()},
                                                  {"--lr", lr.has_value()},
                                                  {"--warmup", warmup.has_value()},
                                                  {"--weight-decay", weight_decay.has_value()},
                                                  {"--clip", clip.has_value()},
                                                  {"--seed", seed.has_value()},
                                                  {"--precision", precision.has_value()},
                                                  {"--fp16-model", fp16_model.has_value()},
                                                  {"--fp16-alt", fp16_alt.has_value()},
                                                  {"--loss-scale", loss_scale.has_value()},
                                                  {"--threads", threads.has_value()},
                                                  {"--bucket-mb", bucket_mb.has_value()},
                                                  {"--zero", zero.has_value()},
                                                  {"--device", device.has_value()},
                                                  {"--data", data.has_value()},
                                                  {"--log", log.has_value()},
                                                  {"--plot", plot.has_value()},
                                                  {"--checkpoint", checkpoint.has_value()},
                                                  {"--checkpoint-every", checkpoint_every.has_value()},
                                                  {"--resume", resume.has_value()},
                                                  {"--keep-best", keep_best.has_value()},
                                                  {"--init-from", init_from.has_value()},
                                                  {"--eval-every", eval_every.has_value()},
                                                  {"--sample-tokens", sample_tokens.has_value()},
                                                  {"--temperature", temperature.has_value()},
                                                  {"--top-k", top_k.has_value()}};
  for (const auto& [name, is_given] : present)
    if (is_given) out.given.insert(name);
  if (model) c.model = *model == "mlp" ? ModelKind::mlp : ModelKind::gpt;
  c.width = width.value_or(c.width);
  c.heads = heads.value_or(c.heads);
  c.depth = depth.value_or(c.depth);
  c.context = context.value_or(c.context);
  c.batch = batch.value_or(c.batch);
  c.steps = steps.value_or(c.steps);
  c.lr = lr.value_or(c.lr);
  c.warmup = warmup.value_or(std::min(c.warmup, c.steps / 10));
  if (weight_decay) c.weight_decay = parse_number(*weight_decay, "--weight-decay", 0.0, 1e3);
  if (clip) c.clip = parse_number(*clip, "--clip", 0.0, 1e30);
  if (seed) c.seed = static_cast<std::uint64_t>(*seed);
  if (precision)
    c.precision = *precision == "fp32" ? Precision::fp32 : *precision == "fp16" ? Precision::fp16 : Precision::bf16;
  if (fp16_model) c.fp16_model = *fp16_model == "mi200" ? Fp16DeviceModel::mi200 : Fp16DeviceModel::cpu;
  if (fp16_alt)
    c.fp16_alt = *fp16_alt == "on"    ? AltImplChoice::alternate
                 : *fp16_alt == "off" ? AltImplChoice::original
                                      : AltImplChoice::per_pass;
  c.loss_scale = loss_scale ? parse_loss_scale(*loss_scale)
                            : LossScaleSetting{c.precision == Precision::fp16 ? LossScaleSetting::Mode::dynamic
                                                                              : LossScaleSetting::Mode::off,
                                               1.0};
  c.data = data.value_or("");
  c.threads = static_cast<int>(threads.value_or(0));
  c.zero = zero == "1" ? 1 : 0;
  if (bucket_mb) c.bucket_mb = parse_number(*bucket_mb, "--bucket-mb", 0.0, 4096.0);
  c.cuda = device == "cuda";
  c.eval_every = eval_every.value_or(std::max<std::int64_t>(1, c.steps / 10));
  c.checkpoint_every = checkpoint_every.value_or(std::max<std::int64_t>(1, c.steps / 4));
  c.log = log, c.plot = plot, c.checkpoint = checkpoint, c.resume = resume, c.keep_best = keep_best;
  c.init_from = init_from;
  c.sample_tokens = sample_tokens.value_or(c.sample_tokens);
  if (temperature) c.temperature = parse_number(*temperature, "--temperature", 0.0, 100.0);
  c.top_k = top_k.value_or(c.top_k);
  check_train_config(c, out.given);
  return out;
}

void check_train_config(const TrainConfig& c, const std::set<std::string>& given) {
  const auto has = [&](const char* o) { return given.count(o) > 0; };
  if (c.model == ModelKind::gpt && c.width % c.heads != 0)
    usage_fail("--width ", c.width, " must be a multiple of --heads ", c.heads,
               " (each head gets width / heads dimensions)");
  if (c.model == ModelKind::mlp && has("--heads")) usage_fail("--heads applies to --model gpt only");
  if (c.zero == 1 && c.cuda) usage_fail("--zero 1 needs --device cpu (the optimizer state is sharded on the host)");
  if (c.warmup >= c.steps) usage_fail("--warmup ", c.warmup, " must be less than --steps ", c.steps);
  if (c.precision != Precision::fp16)
    for (const char* o : {"--fp16-model", "--fp16-alt", "--loss-scale"})
      if (has(o))
        usage_fail(o, " applies to --precision fp16 only, but the precision is ", precision_name(c.precision),
                   " (fp32 and bf16 GEMMs do not use the fp16 policy or loss scaling)");
  if (has("--checkpoint-every") && !c.checkpoint) usage_fail("--checkpoint-every needs --checkpoint FILE");
  if (c.plot && !(c.plot->size() > 4 && c.plot->ends_with(".svg")))
    usage_fail("--plot expects a file name ending in .svg, but got '", *c.plot, "'");
  const std::pair<const char*, const std::optional<std::string>*> outputs[] = {
      {"--log", &c.log}, {"--plot", &c.plot}, {"--checkpoint", &c.checkpoint}, {"--keep-best", &c.keep_best}};
  for (std::size_t i = 0; i < std::size(outputs); ++i)
    for (std::size_t j = i + 1; j < std::size(outputs); ++j)
      if (*outputs[i].second && *outputs[j].second && **outputs[i].second == **outputs[j].second)
        usage_fail(outputs[i].first, " and ", outputs[j].first, " name the same file '", **outputs[i].second, "'");
  if (c.log && c.resume && *c.log == *c.resume) usage_fail("--log and --resume name the same file '", *c.log, "'");
  if (c.plot && c.resume && *c.plot == *c.resume) usage_fail("--plot and --resume name the same file '", *c.plot, "'");
  if (c.init_from && c.resume)
    usage_fail(
        "--init-from and --resume exclude each other (a resumed run continues with its checkpoint's "
        "weights and optimizer state)");
  if (c.keep_best && c.resume && *c.keep_best == *c.resume)
    usage_fail("--keep-best and --resume name the same file '", *c.keep_best,
               "' (the best checkpoint would replace "
               "the one resumed from)");
}

// ---------------------------------------------------------------------------------------------
// The stored form

std::string config_to_json(const TrainConfig& c) {
  tools::JsonLine j;
  j.add("model", model_kind_name(c.model))
      .add("width", c.width)
      .add("heads", c.heads)
      .add("depth", c.depth)
      .add("context", c.context)
      .add("batch", c.batch)
      .add("steps", c.steps)
      .add("lr", c.lr)
      .add("warmup", c.warmup)
      .add("weight_decay", c.weight_decay)
      .add("clip", c.clip)
      .add("seed", std::to_string(c.seed))  // a string: JSON readers lose integers above 2^53
      .add("precision", precision_name(c.precision))
      .add("fp16_model", fp16_model_option(c.fp16_model))
      .add("fp16_alt", fp16_alt_option(c.fp16_alt))
      .add("loss_scale", c.loss_scale.text())
      .add("data", c.data);
  return j.str();
}

TrainConfig config_from_json(std::string_view json, std::string_view what) {
  using ampkit::train::Json;
  Json root;
  try {
    root = ampkit::train::parse_json(json);
  } catch (const ampkit::train::JsonSyntaxError& e) {
    throw Error(detail::concat(what, ": the run configuration is not valid JSON: ", e.what()));
  }
  if (!root.is_object()) throw Error(detail::concat(what, ": the run configuration is not a JSON object"));
  auto field = [&](const char* key) -> const Json& {
    const auto v = root.find(key);
    if (v == root.end()) throw Error(detail::concat(what, ": the run configuration lacks \"", key, "\""));
    return *v;
  };
  auto bad = [&](const char* key, const Json& v) {
    throw Error(
        detail::concat(what, ": the run configuration's \"", key, "\" is ",
                       v.is_string() ? "'" + v.get<std::string>() + "'" : std::string(ampkit::train::json_kind_name(v)),
                       ", which this version does not accept"));
  };
  auto integer = [&](const char* key, std::int64_t lo, std::int64_t hi) {
    const Json& v = field(key);
    const auto u = ampkit::train::json_uint64(v);
    if (!u || static_cast<std::int64_t>(*u) < lo || static_cast<std::int64_t>(*u) > hi || *u > INT64_MAX) bad(key, v);
    return static_cast<std::int64_t>(*u);
  };
  auto number = [&](const char* key, double lo) {
    const Json& v = field(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < lo) bad(key, v);
    return v.get<double>();
  };
  auto text = [&](const char* key, std::initializer_list<std::string_view> allowed) {
    const Json& v = field(key);
    if (!v.is_string()) bad(key, v);
    const std::string& t = v.get_ref<const std::string&>();
    if (allowed.size() == 0) return t;
    for (std::string_view a : allowed)
      if (a == t) return t;
    bad(key, v);
    return std::string();
  };
  TrainConfig c;
  c.model = text("model", {"gpt", "mlp"}) == "mlp" ? ModelKind::mlp : ModelKind::gpt;
  c.width = integer("width", 1, 1 << 20);
  c.heads = integer("heads", 1, 1 << 20);
  c.depth = integer("depth", 1, 1 << 20);
  c.context = integer("context", 1, 1 << 20);
  c.batch = integer("batch", 1, 1 << 20);
  c.steps = integer("steps", 1, INT64_MAX);
  c.lr = number("lr", 0.0);
  c.warmup = integer("warmup", 0, INT64_MAX);
  c.weight_decay = number("weight_decay", 0.0);
  c.clip = number("clip", 0.0);
  const std::string seed = text("seed", {});
  const auto r = std::from_chars(seed.data(), seed.data() + seed.size(), c.seed);
  if (seed.empty() || r.ec != std::errc() || r.ptr != seed.data() + seed.size()) bad("seed", field("seed"));
  const std::string precision = text("precision", {"fp32", "bf16", "fp16"});
  c.precision = precision == "fp32" ? Precision::fp32 : precision == "fp16" ? Precision::fp16 : Precision::bf16;
  c.fp16_model = text("fp16_model", {"exact", "mi200"}) == "mi200" ? Fp16DeviceModel::mi200 : Fp16DeviceModel::cpu;
  const std::string alt = text("fp16_alt", {"auto", "on", "off"});
  c.fp16_alt = alt == "on"    ? AltImplChoice::alternate
               : alt == "off" ? AltImplChoice::original
                              : AltImplChoice::per_pass;
  try {
    c.loss_scale = parse_loss_scale(text("loss_scale", {}));
  } catch (const cli::UsageError&) {
    bad("loss_scale", field("loss_scale"));
  }
  c.data = text("data", {});
  return c;
}

// ---------------------------------------------------------------------------------------------
// Resume

namespace {

std::string value_text(std::int64_t v) { return std::to_string(v); }
std::string value_text(std::uint64_t v) { return std::to_string(v); }
std::string value_text(double v) { return number_text(v); }
std::string value_text(const std::string& v) { return v.empty() ? "(the default corpus)" : "'" + v + "'"; }
std::string value_text(ModelKind v) { return std::string(model_kind_name(v)); }
std::string value_text(Precision v) { return std::string(precision_name(v)); }
std::string value_text(Fp16DeviceModel v) { return std::string(fp16_model_option(v)); }
std::string value_text(AltImplChoice v) { return std::string(fp16_alt_option(v)); }
std::string value_text(const LossScaleSetting& v) { return v.text(); }

}  // namespace

void merge_resumed_config(TrainOptions& options, const TrainConfig& saved, std::vector<std::string>* notes) {
  TrainConfig& c = options.config;
  const bool precision_changed = options.given.count("--precision") && c.precision != saved.precision;
  auto field = [&]<typename T>(const char* option, T TrainConfig::*member, bool model_field) {
    if (!options.given.count(option)) {
      c.*member = saved.*member;
      return;
    }
    if (c.*member == saved.*member) return;
    if (model_field)
      throw Error(detail::concat("--resume: the checkpoint was saved with ", option, " ", value_text(saved.*member),
                                 ", but this run has ", option, " ", value_text(c.*member),
                                 " (the model's shape cannot change; leave the option out to keep the saved value)"));
    if (notes)
      notes->push_back(
          detail::concat(option, " ", value_text(c.*member), " instead of the saved ", value_text(saved.*member)));
  };
  field("--model", &TrainConfig::model, true);
  field("--width", &TrainConfig::width, true);
  field("--heads", &TrainConfig::heads, true);
  field("--depth", &TrainConfig::depth, true);
  field("--context", &TrainConfig::context, true);
  field("--data", &TrainConfig::data, true);
  field("--batch", &TrainConfig::batch, false);
  field("--steps", &TrainConfig::steps, false);
  field("--lr", &TrainConfig::lr, false);
  field("--warmup", &TrainConfig::warmup, false);
  field("--weight-decay", &TrainConfig::weight_decay, false);
  field("--clip", &TrainConfig::clip, false);
  field("--seed", &TrainConfig::seed, false);
  field("--precision", &TrainConfig::precision, false);
  if (precision_changed) {
    // The saved fp16 settings belong to the saved precision: defaults for the new one, unless given.
    const TrainConfig defaults;
    if (!options.given.count("--fp16-model")) c.fp16_model = defaults.fp16_model;
    if (!options.given.count("--fp16-alt")) c.fp16_alt = defaults.fp16_alt;
    if (!options.given.count("--loss-scale"))
      c.loss_scale = {c.precision == Precision::fp16 ? LossScaleSetting::Mode::dynamic : LossScaleSetting::Mode::off,
                      1.0};
  } else {
    field("--fp16-model", &TrainConfig::fp16_model, false);
    field("--fp16-alt", &TrainConfig::fp16_alt, false);
    field("--loss-scale", &TrainConfig::loss_scale, false);
  }
  if (!options.given.count("--eval-every")) c.eval_every = std::max<std::int64_t>(1, c.steps / 10);
  if (!options.given.count("--checkpoint-every")) c.checkpoint_every = std::max<std::int64_t>(1, c.steps / 4);
  check_train_config(c, options.given);
}

}  // namespace ampkit::tools::train
