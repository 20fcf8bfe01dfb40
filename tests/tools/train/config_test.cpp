// Tests of the options of `ampkit train` (tools/ampkit/train/config, run_checkpoint): defaults,
// every option, each bad value and combination with its message, the stored JSON form and its
// place in the checkpoint, the resume merge.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "tools/ampkit/train/config.hpp"
#include "tools/ampkit/train/run_checkpoint.hpp"

namespace ampkit::tools::train {
namespace {

std::string usage_error(const Args& args) {
  try {
    parse_train_options(args);
  } catch (const cli::UsageError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TrainOptions, DefaultsAreTheDocumentedOnes) {
  const auto o = parse_train_options({});
  ASSERT_TRUE(o);
  const TrainConfig& c = o->config;
  EXPECT_EQ(c.model, ModelKind::gpt);
  EXPECT_EQ(c.width, 128);
  EXPECT_EQ(c.heads, 4);
  EXPECT_EQ(c.depth, 2);
  EXPECT_EQ(c.context, 64);
  EXPECT_EQ(c.batch, 32);
  EXPECT_EQ(c.steps, 1000);
  EXPECT_EQ(c.lr, 3e-3);
  EXPECT_EQ(c.warmup, 100);
  EXPECT_EQ(c.eval_every, 100);
  EXPECT_EQ(c.checkpoint_every, 250);
  EXPECT_EQ(c.precision, Precision::bf16);
  EXPECT_EQ(c.loss_scale.mode, LossScaleSetting::Mode::off);
  EXPECT_TRUE(c.data.empty());
  EXPECT_TRUE(o->given.empty());
}

TEST(TrainOptions, ParsesEveryOption) {
  const auto o = parse_train_options({"--model",
                                      "gpt",
                                      "--width=96",
                                      "--heads",
                                      "3",
                                      "--depth",
                                      "4",
                                      "--context",
                                      "32",
                                      "--batch",
                                      "8",
                                      "--steps",
                                      "400",
                                      "--lr",
                                      "1e-3",
                                      "--warmup",
                                      "20",
                                      "--weight-decay",
                                      "0",
                                      "--clip",
                                      "0.5",
                                      "--seed",
                                      "9",
                                      "--precision",
                                      "fp16",
                                      "--fp16-model",
                                      "mi200",
                                      "--fp16-alt",
                                      "off",
                                      "--loss-scale",
                                      "1024",
                                      "--threads",
                                      "2",
                                      "--data",
                                      "t.txt",
                                      "--log",
                                      "l.jsonl",
                                      "--plot",
                                      "p.svg",
                                      "--checkpoint",
                                      "c.safetensors",
                                      "--checkpoint-every",
                                      "50",
                                      "--eval-every",
                                      "25",
                                      "--sample-tokens",
                                      "0",
                                      "--temperature",
                                      "0",
                                      "--top-k",
                                      "0"});
  ASSERT_TRUE(o);
  const TrainConfig& c = o->config;
  EXPECT_EQ(c.width, 96);
  EXPECT_EQ(c.heads, 3);
  EXPECT_EQ(c.depth, 4);
  EXPECT_EQ(c.context, 32);
  EXPECT_EQ(c.batch, 8);
  EXPECT_EQ(c.steps, 400);
  EXPECT_EQ(c.lr, 1e-3);
  EXPECT_EQ(c.warmup, 20);
  EXPECT_EQ(c.weight_decay, 0.0);
  EXPECT_EQ(c.clip, 0.5);
  EXPECT_EQ(c.seed, 9u);
  EXPECT_EQ(c.precision, Precision::fp16);
  EXPECT_EQ(c.fp16_model, Fp16DeviceModel::mi200);
  EXPECT_EQ(c.fp16_alt, AltImplChoice::original);
  EXPECT_EQ(c.loss_scale, (LossScaleSetting{LossScaleSetting::Mode::fixed, 1024.0}));
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.data, "t.txt");
  EXPECT_EQ(c.log, "l.jsonl");
  EXPECT_EQ(c.plot, "p.svg");
  EXPECT_EQ(c.checkpoint, "c.safetensors");
  EXPECT_EQ(c.checkpoint_every, 50);
  EXPECT_EQ(c.eval_every, 25);
  EXPECT_EQ(c.sample_tokens, 0);
  EXPECT_EQ(c.temperature, 0.0);
  EXPECT_EQ(c.top_k, 0);
  EXPECT_EQ(o->given.size(), 26u);
  EXPECT_TRUE(o->given.count("--weight-decay"));
}

TEST(TrainOptions, Fp16DefaultsToDynamicLossScalingAndStepDerivedCadences) {
  const auto o = parse_train_options({"--precision", "fp16", "--steps", "50"});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->config.loss_scale.mode, LossScaleSetting::Mode::dynamic);
  EXPECT_EQ(o->config.warmup, 5);  // at most steps / 10
  EXPECT_EQ(o->config.eval_every, 5);
  EXPECT_EQ(o->config.checkpoint_every, 12);
  EXPECT_EQ(parse_train_options({"--precision", "fp16", "--loss-scale", "off"})->config.loss_scale.mode,
            LossScaleSetting::Mode::off);
}

TEST(TrainOptions, EachBadValueIsAUsageErrorNamingIt) {
  const struct {
    Args args;
    const char* message;
  } cases[] = {
      {{"--model", "rnn"}, "--model expects one of gpt|mlp, but got 'rnn'"},
      {{"--width", "4"}, "--width expects an integer in [8, 4096], but got 4"},
      {{"--width", "100", "--heads", "3"},
       "--width 100 must be a multiple of --heads 3 (each head gets width / heads dimensions)"},
      {{"--model", "mlp", "--heads", "2"}, "--heads applies to --model gpt only"},
      {{"--depth", "0"}, "--depth expects an integer in [1, 64], but got 0"},
      {{"--context", "x"}, "--context expects an integer in [1, 4096], but got 'x'"},
      {{"--batch", "0"}, "--batch expects an integer in [1, 4096], but got 0"},
      {{"--steps", "0"}, "--steps expects an integer in [1, 100000000], but got 0"},
      {{"--lr", "0"}, "--lr expects a positive finite number, but got '0'"},
      {{"--lr", "nan"}, "--lr expects a positive finite number, but got 'nan'"},
      {{"--steps", "100", "--warmup", "100"}, "--warmup 100 must be less than --steps 100"},
      {{"--weight-decay", "-0.1"}, "--weight-decay expects a number in [0, 1000], but got '-0.1'"},
      {{"--clip", "inf"}, "--clip expects a number in [0, 1e+30], but got 'inf'"},
      {{"--seed", "-1"}, "--seed expects an integer in [0, 9223372036854775807], but got -1"},
      {{"--precision", "fp8"}, "--precision expects one of fp32|bf16|fp16, but got 'fp8'"},
      {{"--precision", "fp16", "--fp16-model", "cpu"}, "--fp16-model expects one of exact|mi200, but got 'cpu'"},
      {{"--precision", "fp16", "--fp16-alt", "yes"}, "--fp16-alt expects one of auto|on|off, but got 'yes'"},
      {{"--fp16-model", "mi200"},
       "--fp16-model applies to --precision fp16 only, but the precision is bf16 (fp32 and bf16 GEMMs do not use the "
       "fp16 policy or loss scaling)"},
      {{"--precision", "fp32", "--loss-scale", "dynamic"},
       "--loss-scale applies to --precision fp16 only, but the precision is fp32 (fp32 and bf16 GEMMs do not use the "
       "fp16 policy or loss scaling)"},
      {{"--precision", "fp16", "--loss-scale", "big"},
       "--loss-scale expects dynamic, off or a fixed scale in (0, 2^24], but got 'big'"},
      {{"--precision", "fp16", "--loss-scale", "0"},
       "--loss-scale expects dynamic, off or a fixed scale in (0, 2^24], but got '0'"},
      {{"--precision", "fp16", "--loss-scale", "1e9"},
       "--loss-scale expects dynamic, off or a fixed scale in (0, 2^24], but got '1e9'"},
      {{"--threads", "0"}, "--threads expects an integer in [1, 1024], but got 0"},
      {{"--plot", "loss.png"}, "--plot expects a file name ending in .svg, but got 'loss.png'"},
      {{"--log", "x", "--plot", "x.svg", "--checkpoint", "x.svg"},
       "--plot and --checkpoint name the same file 'x.svg'"},
      {{"--log", "r.ckpt", "--resume", "r.ckpt"}, "--log and --resume name the same file 'r.ckpt'"},
      {{"--checkpoint-every", "10"}, "--checkpoint-every needs --checkpoint FILE"},
      {{"--temperature", "-1"}, "--temperature expects a number in [0, 100], but got '-1'"},
      {{"--top-k", "-2"}, "--top-k expects an integer in [0, 1000000], but got -2"},
      {{"--sample-tokens", "1000001"}, "--sample-tokens expects an integer in [0, 100000], but got 1000001"},
      {{"--data"}, "option --data expects a value (FILE), but got none"},
      {{"--data", ""}, "option --data expects a value (FILE), but got an empty string"},
      {{"--save", "dir"}, "unknown option '--save' (ampkit train --help lists the options)"},
      {{"--steps", "5", "--steps", "6"}, "option --steps given twice"},
  };
  for (const auto& c : cases) EXPECT_EQ(usage_error(c.args), c.message);
}

TEST(TrainOptions, HelpNamesEveryOption) {
  testing::internal::CaptureStdout();
  EXPECT_FALSE(parse_train_options({"--help"}).has_value());
  const std::string help = testing::internal::GetCapturedStdout();
  for (const char* o :
       {"--model",     "--width",      "--heads",           "--depth",        "--context",       "--batch",
        "--steps",     "--lr",         "--warmup",          "--weight-decay", "--clip",          "--seed",
        "--precision", "--fp16-model", "--fp16-alt",        "--loss-scale",   "--threads",       "--data",
        "--log",       "--plot",       "--checkpoint",      "--resume",       "--sample-tokens", "--temperature",
        "--top-k",     "--eval-every", "--checkpoint-every"})
    EXPECT_NE(help.find(std::string("  ") + o + " "), std::string::npos) << o;
  EXPECT_EQ(help.rfind("usage: ampkit train [options]\n", 0), 0u);
}

TEST(TrainConfigJson, RoundTripsEveryStoredField) {
  TrainConfig c;
  c.model = ModelKind::mlp;
  c.width = 72, c.heads = 1, c.depth = 3, c.context = 17, c.batch = 5, c.steps = 123, c.lr = 1.25e-3, c.warmup = 7;
  c.weight_decay = 0.01, c.clip = 0, c.seed = 18446744073709551615ull, c.precision = Precision::fp16;
  c.fp16_model = Fp16DeviceModel::mi200, c.fp16_alt = AltImplChoice::alternate;
  c.loss_scale = {LossScaleSetting::Mode::fixed, 4096};
  c.data = "some \"quoted\" path\n.txt";
  const TrainConfig r = config_from_json(config_to_json(c), "test");
  EXPECT_EQ(config_to_json(r), config_to_json(c));
  EXPECT_EQ(r.seed, c.seed);
  EXPECT_EQ(r.lr, c.lr);
  EXPECT_EQ(r.data, c.data);
  EXPECT_EQ(r.loss_scale, c.loss_scale);
}

TEST(TrainConfigJson, MissingOrBadFieldsAreNamed) {
  const std::string good = config_to_json(TrainConfig{});
  auto error = [](const std::string& json) {
    try {
      config_from_json(json, "checkpoint 'c'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string no_width = good;
  no_width.replace(no_width.find("\"width\":128,"), 12, "");
  EXPECT_EQ(error(no_width), "checkpoint 'c': the run configuration lacks \"width\"");
  std::string bad_model = good;
  bad_model.replace(bad_model.find("\"gpt\""), 5, "\"rnn\"");
  EXPECT_EQ(error(bad_model),
            "checkpoint 'c': the run configuration's \"model\" is 'rnn', which this version does not accept");
  EXPECT_EQ(
      error("{"),
      "checkpoint 'c': the run configuration is not valid JSON: syntax error while parsing object key - unexpected "
      "end of input; expected string literal at byte 1");
  EXPECT_NE(error("[1]").find("not a JSON object"), std::string::npos);
}

TEST(TrainResume, OmittedOptionsTakeTheSavedValues) {
  TrainConfig saved;
  saved.width = 64, saved.heads = 2, saved.steps = 300, saved.lr = 1e-3, saved.seed = 5, saved.data = "t.txt";
  TrainOptions o = *parse_train_options({"--resume", "r.ckpt"});
  std::vector<std::string> notes;
  merge_resumed_config(o, saved, &notes);
  EXPECT_EQ(config_to_json(o.config), config_to_json(saved));
  EXPECT_EQ(o.config.eval_every, 30);
  EXPECT_TRUE(notes.empty());
}

TEST(TrainResume, ModelShapeCannotChangeButTrainingOptionsCan) {
  TrainConfig saved;
  saved.width = 64, saved.heads = 2;
  TrainOptions o = *parse_train_options({"--resume", "r.ckpt", "--width", "128", "--heads", "2"});
  try {
    merge_resumed_config(o, saved, nullptr);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--resume: the checkpoint was saved with --width 64, but this run has --width 128 (the "
                 "model's shape cannot change; leave the option out to keep the saved value)");
  }
  TrainOptions longer = *parse_train_options({"--resume", "r.ckpt", "--steps", "2000", "--width", "64"});
  std::vector<std::string> notes;
  merge_resumed_config(longer, saved, &notes);
  EXPECT_EQ(longer.config.steps, 2000);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "--steps 2000 instead of the saved 1000");
}

TEST(TrainResume, ChangingThePrecisionResetsTheFp16Settings) {
  TrainConfig saved;
  saved.precision = Precision::fp16;
  saved.fp16_model = Fp16DeviceModel::mi200;
  saved.loss_scale = {LossScaleSetting::Mode::dynamic, 1.0};
  TrainOptions o = *parse_train_options({"--resume", "r.ckpt", "--precision", "fp32"});
  merge_resumed_config(o, saved, nullptr);
  EXPECT_EQ(o.config.precision, Precision::fp32);
  EXPECT_EQ(o.config.fp16_model, Fp16DeviceModel::cpu);
  EXPECT_EQ(o.config.loss_scale.mode, LossScaleSetting::Mode::off);
}

TEST(TrainRunCheckpoint, TheRunConfigurationIsTheConfigEntry) {
  TrainCheckpoint c;
  c.config.width = 16;
  c.vocabulary = Vocabulary({U'a', U'b'});
  ampkit::train::Checkpoint plain = c;
  auto error = [](ampkit::train::Checkpoint checkpoint) {
    try {
      run_checkpoint_from(std::move(checkpoint), "checkpoint 'c'");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(plain), "checkpoint 'c': the metadata lacks \"config\"; not a checkpoint of ampkit train");
  plain.metadata = {{"config", config_to_json(c.config)}};
  plain.vocabulary = Vocabulary();
  EXPECT_EQ(error(plain), "checkpoint 'c': the metadata \"vocabulary\" is empty");
  plain.vocabulary = c.vocabulary;
  plain.metadata = {{"config", "{}"}};
  EXPECT_EQ(error(plain), "checkpoint 'c': the run configuration lacks \"model\"");
  plain.metadata = {{"config", config_to_json(c.config)}};
  EXPECT_EQ(run_checkpoint_from(plain, "c").config.width, 16);
}

}  // namespace
}  // namespace ampkit::tools::train
