// Tests of the training loop of `ampkit train` (tools/ampkit/train/train_run) without the graph
// runtime: a bigram model with exact, deterministic arithmetic stands in for the GPT. The loop
// must learn, log one JSON object per step, plot, checkpoint on its cadence, resume bitwise
// (the interrupted-and-resumed run ends with the same bits as the uninterrupted one), refuse a
// diverged run, and sample deterministically.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/json.hpp"
#include "ampkit/train/rng.hpp"
#include "ampkit/version.hpp"
#include "tests/train/train_test_support.hpp"
#include "tools/ampkit/common/build_info.hpp"
#include "tools/ampkit/train/train_run.hpp"

namespace ampkit::tools::train {
namespace {

// logits(next | token) = W[token]; trained by SGD with momentum (the "optimizer state").
class BigramModel final : public TrainModel {
 public:
  BigramModel(std::int64_t rows, std::int64_t context, std::int64_t vocab, std::uint64_t seed)
      : rows_(rows),
        context_(context),
        vocab_(vocab),
        w_(static_cast<std::size_t>(vocab * vocab)),
        m_(w_.size(), 0.0f) {
    SplitMix64 r(seed);
    for (float& x : w_) x = static_cast<float>(r.unit() - 0.5) * 0.02f;
  }
  std::int64_t nan_at_step = -1;  // makes that step's loss NaN

  std::int64_t rows() const override { return rows_; }
  std::int64_t context() const override { return context_; }
  std::int64_t vocab() const override { return vocab_; }

  ModelStep step(const Batch& b, double lr) override {
    std::vector<float> grad(w_.size(), 0.0f);
    const double loss = forward(b, &grad);
    double norm2 = 0.0;
    for (std::size_t i = 0; i < w_.size(); ++i) {
      m_[i] = 0.9f * m_[i] + grad[i];
      w_[i] -= static_cast<float>(lr) * m_[i];
      norm2 += static_cast<double>(grad[i]) * grad[i];
    }
    ++steps_;
    return {steps_ == nan_at_step ? NAN : loss, std::sqrt(norm2), false, scale_.scale};
  }
  double evaluate(const Batch& b) override { return forward(b, nullptr); }
  void logits(std::span<const std::int32_t> tokens, std::span<float> out) override {
    for (std::size_t i = 0; i < tokens.size(); ++i)
      std::copy_n(w_.begin() + tokens[i] * vocab_, vocab_, out.begin() + static_cast<std::ptrdiff_t>(i) * vocab_);
  }
  void save_state(Checkpoint& c) override {
    c.tensors = {SafeTensor::of_f32("w", {vocab_, vocab_}, w_), SafeTensor::of_f32("w:momentum", {vocab_, vocab_}, m_)};
    c.optimizer_steps = steps_;
    c.loss_scale = scale_;
  }
  void restore_state(const Checkpoint& c, std::string_view what) override {
    check_checkpoint_tensors(c, {{"w", {vocab_, vocab_}}, {"w:momentum", {vocab_, vocab_}}}, what);
    for (const SafeTensor& t : c.tensors) (t.name == "w" ? w_ : m_) = t.f32();
    steps_ = c.optimizer_steps;
    scale_ = c.loss_scale;
  }
  double loss_scale() const override { return scale_.scale; }
  std::int64_t optimizer_steps() const { return steps_; }
  const std::vector<float>& weights() const { return w_; }

 private:
  double forward(const Batch& b, std::vector<float>* grad) const {
    double loss = 0.0;
    const auto n = static_cast<double>(b.tokens.size());
    std::vector<double> p(static_cast<std::size_t>(vocab_));
    for (std::size_t i = 0; i < b.tokens.size(); ++i) {
      const float* row = w_.data() + b.tokens[i] * vocab_;
      double top = row[0], z = 0.0;
      for (std::int64_t v = 1; v < vocab_; ++v) top = std::max(top, static_cast<double>(row[v]));
      for (std::int64_t v = 0; v < vocab_; ++v) z += p[static_cast<std::size_t>(v)] = std::exp(row[v] - top);
      loss -= std::log(p[static_cast<std::size_t>(b.targets[i])] / z);
      if (grad)
        for (std::int64_t v = 0; v < vocab_; ++v)
          (*grad)[static_cast<std::size_t>(b.tokens[i] * vocab_ + v)] +=
              static_cast<float>((p[static_cast<std::size_t>(v)] / z - (v == b.targets[i])) / n);
    }
    return loss / n;
  }

  std::int64_t rows_, context_, vocab_;
  std::vector<float> w_, m_;
  std::int64_t steps_ = 0;
  LossScaleSnapshot scale_{1.0, 0, 0};
};

Corpus abc_corpus() {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "abcabcabc\nabcabcabc\nabcabcabc\n%\n";
  return build_corpus({{"abc", text}});
}

TrainConfig small_config(const TempDir& dir) {
  TrainConfig c;
  c.batch = 4, c.context = 8, c.steps = 60, c.lr = 0.5, c.warmup = 5, c.eval_every = 20, c.seed = 3;
  c.log = dir.file("log.jsonl");
  c.plot = dir.file("loss.svg");
  c.checkpoint = dir.file("run.safetensors");
  c.checkpoint_every = 20;
  c.sample_tokens = 12;
  return c;
}

struct Quiet {
  std::FILE* sink = std::tmpfile();
  ~Quiet() { std::fclose(sink); }
  RunIo io() const {
    RunIo io;
    io.report = sink, io.progress = sink;
    double t = 0.0;
    io.clock = [t]() mutable { return t += 0.001; };
    return io;
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(TrainRun, LearnsBeatsTheBaselineLogsAndPlots) {
  TempDir dir;
  Quiet quiet;
  const Corpus corpus = abc_corpus();
  const TrainConfig c = small_config(dir);
  BigramModel model(c.batch, c.context, corpus.vocabulary.size(), c.seed);
  const RunSummary s = run_training(model, corpus, c, nullptr, quiet.io());
  EXPECT_EQ(s.first_step, 0);
  EXPECT_EQ(s.steps, 60);
  EXPECT_LT(s.validation_loss, 0.5 * unigram_baseline(corpus));
  ASSERT_EQ(s.validation_curve.size(), 4u);  // steps 0, 20, 40, 60
  EXPECT_EQ(s.validation_curve[0].step, 0);
  EXPECT_NEAR(s.validation_curve[0].loss, std::log(4.0), 0.05);  // 4 characters, nearly uniform at first
  EXPECT_EQ(s.train_curve.size(), 60u);
  EXPECT_GT(s.tokens_per_second, 0.0);

  std::vector<std::string> log = lines_of(slurp(*c.log));
  ASSERT_EQ(log.size(), 61u);
  // The header line: what made the run, then one line per step.
  const Json header = parse_json(log[0]);
  EXPECT_EQ(header["format"], "ampkit-train-log-1");
  EXPECT_EQ(header["version"], AMPKIT_VERSION);
  EXPECT_EQ(header["commit"], build_commit());
  EXPECT_EQ(header["start_step"], 0);
  for (const char* key : {"hostname", "cpu", "isa_best", "isa_active", "threads", "ranks", "device"})
    EXPECT_TRUE(header["machine"].contains(key)) << key;
  EXPECT_EQ(header["config"]["steps"], 60);
  EXPECT_EQ(header["config"]["eval_every"], c.eval_every);
  EXPECT_EQ(header["config"]["log"], *c.log);
  EXPECT_FALSE(header.contains("step"));
  log.erase(log.begin());
  for (std::size_t i = 0; i < log.size(); ++i) {
    const Json v = parse_json(log[i]);
    EXPECT_EQ(json_uint64(v["step"]), i + 1);
    for (const char* key : {"loss", "lr", "grad_norm", "loss_scale", "step_ms", "tokens_per_s", "elapsed_s"})
      EXPECT_TRUE(v.contains(key) && v[key].is_number()) << key << " in " << log[i];
    EXPECT_TRUE(v["skipped"].is_boolean());
    EXPECT_EQ(v.contains("validation_loss"), (i + 1) % 20 == 0) << log[i];
  }
  EXPECT_EQ(parse_json(log[0])["lr"].get<double>(), 0.1);  // warm-up step 1 of 5
  const std::string svg = slurp(*c.plot);
  EXPECT_NE(svg.find("<polyline id=\"train\""), std::string::npos);
  EXPECT_NE(svg.find("<polyline id=\"validation\""), std::string::npos);
  const TrainCheckpoint saved = load_run_checkpoint(*c.checkpoint);
  EXPECT_EQ(saved.step, 60);
  EXPECT_EQ(saved.tensors[0].f32(), model.weights());
  ASSERT_EQ(s.samples.size(), 3u);
  for (const std::string& text : s.samples) {
    EXPECT_LE(text.size(), 12u);
    EXPECT_EQ(text.find_first_not_of("abc\n"), std::string::npos) << text;
  }
}

// --keep-best: a checkpoint at every validation that beats every earlier one after step 0; the
// file ends as the checkpoint of the best step.
TEST(TrainRun, KeepBestSavesAtEveryNewLowestValidationLoss) {
  TempDir dir;
  Quiet quiet;
  const Corpus corpus = abc_corpus();
  TrainConfig c = small_config(dir);
  c.checkpoint.reset(), c.log.reset(), c.plot.reset();
  c.eval_every = 5;
  c.keep_best = dir.file("best.safetensors");
  std::vector<std::int64_t> saved_at;
  RunIo io = quiet.io();
  io.after_checkpoint = [&](std::int64_t step, const std::string& path) {
    EXPECT_EQ(path, *c.keep_best);
    saved_at.push_back(step);
  };
  BigramModel model(c.batch, c.context, corpus.vocabulary.size(), c.seed);
  const RunSummary s = run_training(model, corpus, c, nullptr, io);
  std::vector<std::int64_t> expected;
  double best = INFINITY;
  std::int64_t best_step = 0;
  for (const auto& point : s.validation_curve)
    if (point.step > 0 && point.loss < best) best = point.loss, best_step = point.step, expected.push_back(point.step);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(saved_at, expected);
  EXPECT_EQ(load_run_checkpoint(*c.keep_best).step, best_step);
  // Over several ranks it is refused (only rank 0 evaluates), before any step.
  TrainConfig two = c;
  two.batch = 4;
  BigramModel half(2, c.context, corpus.vocabulary.size(), c.seed);
  EXPECT_THROW(
      {
        try {
          run_training(half, corpus, two, nullptr, quiet.io(), RankSlice{0, 2});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("--keep-best"), std::string::npos) << e.what();
          throw;
        }
      },
      Error);
}

TEST(TrainRun, ResumingAtACheckpointEndsWithTheSameBits) {
  TempDir dir;
  Quiet quiet;
  const Corpus corpus = abc_corpus();
  const TrainConfig c = small_config(dir);
  std::vector<std::int64_t> saved_at;
  RunIo io = quiet.io();
  io.after_checkpoint = [&](std::int64_t step, const std::string& path) {
    saved_at.push_back(step);
    if (step == 20) std::filesystem::copy_file(path, dir.file("at20.safetensors"));
  };
  BigramModel whole(c.batch, c.context, corpus.vocabulary.size(), c.seed);
  run_training(whole, corpus, c, nullptr, io);
  EXPECT_EQ(saved_at, (std::vector<std::int64_t>{20, 40, 60}));
  const std::vector<std::string> whole_log = lines_of(slurp(*c.log));

  // A new process: another model instance (another initialization), the checkpoint of step 20.
  TrainConfig resumed_config = c;
  resumed_config.log = dir.file("resumed.jsonl");
  resumed_config.checkpoint = dir.file("resumed.safetensors");
  const TrainCheckpoint at20 = load_run_checkpoint(dir.file("at20.safetensors"));
  EXPECT_EQ(at20.step, 20);
  BigramModel resumed(c.batch, c.context, corpus.vocabulary.size(), 999);
  const RunSummary s = run_training(resumed, corpus, resumed_config, &at20, quiet.io());
  EXPECT_EQ(s.first_step, 20);
  EXPECT_EQ(resumed.weights(), whole.weights());  // bitwise
  EXPECT_EQ(resumed.optimizer_steps(), 60);
  // The loss of every resumed step is the uninterrupted run's, to the last bit.
  const std::vector<std::string> resumed_log = lines_of(slurp(*resumed_config.log));
  ASSERT_EQ(resumed_log.size(), 41u);
  EXPECT_EQ(parse_json(resumed_log[0])["start_step"], 20);  // the header
  for (std::size_t i = 1; i < resumed_log.size(); ++i) {
    const Json a = parse_json(whole_log[i + 20]), b = parse_json(resumed_log[i]);
    EXPECT_EQ(a["step"].dump(), b["step"].dump());
    EXPECT_EQ(a["loss"].dump(), b["loss"].dump()) << "step " << i + 20;
    EXPECT_EQ(a["lr"].dump(), b["lr"].dump());
  }
  // The curves carry on from the checkpoint's.
  EXPECT_EQ(s.train_curve.size(), 60u);
  EXPECT_EQ(s.validation_curve.size(), 4u);
  EXPECT_EQ(load_run_checkpoint(*resumed_config.checkpoint).tensors[1].f32(),
            load_run_checkpoint(*c.checkpoint).tensors[1].f32());  // the optimizer state too
}

TEST(TrainRun, ADivergedRunStopsWithAClearError) {
  TempDir dir;
  Quiet quiet;
  const Corpus corpus = abc_corpus();
  TrainConfig c = small_config(dir);
  c.checkpoint.reset();
  BigramModel model(c.batch, c.context, corpus.vocabulary.size(), c.seed);
  model.nan_at_step = 7;
  try {
    run_training(model, corpus, c, nullptr, quiet.io());
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "the training loss became nan at step 7: the run diverged (try a lower --lr, or --clip)");
  }
}

TEST(TrainRun, AModelOfAnotherShapeIsRefused) {
  TempDir dir;
  Quiet quiet;
  const Corpus corpus = abc_corpus();
  const TrainConfig c = small_config(dir);
  BigramModel wrong(c.batch, c.context, corpus.vocabulary.size() + 1, c.seed);
  EXPECT_THROW(run_training(wrong, corpus, c, nullptr, quiet.io()), Error);
}

TEST(TrainRun, SamplingIsSeededAndGreedyFollowsTheModel) {
  TempDir dir;
  Quiet quiet;
  const Corpus corpus = abc_corpus();
  TrainConfig c = small_config(dir);
  c.steps = 200, c.log.reset(), c.plot.reset(), c.checkpoint.reset();
  BigramModel model(c.batch, c.context, corpus.vocabulary.size(), c.seed);
  run_training(model, corpus, c, nullptr, quiet.io());
  const auto greedy = sample_texts(model, corpus.vocabulary, 2, 20, 0.0, 0, 1);
  ASSERT_EQ(greedy.size(), 2u);
  EXPECT_EQ(greedy[0], greedy[1]);
  // After a newline the likeliest is 'a' (3 of 4), after 'c' it is 'a' (2 of 3): greedy loops.
  EXPECT_EQ(greedy[0], "abcabcabcabcabcabcab");
  EXPECT_EQ(sample_texts(model, corpus.vocabulary, 3, 30, 1.0, 0, 5),
            sample_texts(model, corpus.vocabulary, 3, 30, 1.0, 0, 5));
  EXPECT_TRUE(sample_texts(model, corpus.vocabulary, 3, 0, 1.0, 0, 5).empty());
  EXPECT_EQ(sample_texts(model, corpus.vocabulary, 99, 5, 1.0, 0, 5).size(), 4u);  // at most one per row
}

}  // namespace
}  // namespace ampkit::tools::train
