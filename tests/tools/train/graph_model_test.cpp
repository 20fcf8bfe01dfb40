// Tests of `ampkit train` on the real model (tools/ampkit/train/graph_model.cpp over
// ampkit::train::Trainer): the loop learns, a checkpoint holds exactly the model's tensors, a
// resumed run ends with the same bits as the uninterrupted one in fp32, bf16 and fp16 (dynamic
// loss scaling), and a checkpoint of another shape is refused. Compiled where the build has the
// training-graph runtime (ampkit/train/trainer.hpp).
#if __has_include("ampkit/train/trainer.hpp")

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "tests/train/train_test_support.hpp"
#include "tools/ampkit/train/model.hpp"
#include "tools/ampkit/train/train_run.hpp"

namespace ampkit::tools::train {
namespace {

Corpus fox_corpus() {
  std::string text;
  for (int i = 0; i < 120; ++i)
    text += "The quick brown fox " + std::to_string(i % 7) + " jumps over the lazy dog.\n%\n";
  return build_corpus({{"fox", text}});
}

TrainConfig tiny(const TempDir& dir, Precision precision) {
  TrainConfig c;
  c.width = 16, c.heads = 2, c.depth = 1, c.context = 16, c.batch = 4, c.steps = 12, c.warmup = 2, c.lr = 1e-2;
  c.eval_every = 6, c.seed = 5, c.precision = precision, c.sample_tokens = 0;
  if (precision == Precision::fp16) c.loss_scale = {LossScaleSetting::Mode::dynamic, 1.0};
  c.log = dir.file("log.jsonl");
  c.checkpoint = dir.file("run.safetensors");
  c.checkpoint_every = 6;
  return c;
}

RunIo quiet(std::FILE* sink) {
  RunIo io;
  io.report = sink, io.progress = sink;
  return io;
}

class GraphModelResume : public testing::TestWithParam<Precision> {};

TEST_P(GraphModelResume, ResumedRunEndsWithTheSameBits) {
  TempDir dir;
  std::FILE* sink = std::tmpfile();
  const Corpus corpus = fox_corpus();
  const TrainConfig c = tiny(dir, GetParam());
  RunIo io = quiet(sink);
  io.after_checkpoint = [&](std::int64_t step, const std::string& path) {
    if (step == 6) std::filesystem::copy_file(path, dir.file("at6.safetensors"));
  };
  const auto whole = make_graph_model(c, corpus.vocabulary.size());
  const RunSummary a = run_training(*whole, corpus, c, nullptr, io);
  EXPECT_LT(a.validation_curve.back().loss, a.validation_curve.front().loss);

  const TrainCheckpoint at6 = load_run_checkpoint(dir.file("at6.safetensors"));
  TrainConfig again = c;
  again.log = dir.file("resumed.jsonl");
  again.checkpoint = dir.file("resumed.safetensors");
  const auto resumed = make_graph_model(again, corpus.vocabulary.size());
  check_checkpoint_tensors(at6, trainer_tensor_specs(resumed->trainer()), "at6");
  run_training(*resumed, corpus, again, &at6, quiet(sink));
  Checkpoint cx, cy;
  whole->save_state(cx);
  resumed->save_state(cy);
  const std::vector<SafeTensor>&x = cx.tensors, &y = cy.tensors;
  ASSERT_EQ(x.size(), y.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].name, y[i].name);
    EXPECT_TRUE(x[i].bytes == y[i].bytes) << x[i].name << " differs after the resume";
  }
  EXPECT_EQ(cx.optimizer_steps, cy.optimizer_steps);
  EXPECT_EQ(cx.loss_scale, cy.loss_scale);
  const std::string full = slurp(*c.log), rest = slurp(*again.log);
  // The resumed log's losses are the last 6 lines' of the uninterrupted run.
  auto losses = [](const std::string& log) {
    std::vector<std::string> out;
    for (std::size_t at = log.find("\"loss\":"); at != std::string::npos; at = log.find("\"loss\":", at + 1))
      out.push_back(log.substr(at, log.find(',', at) - at));
    return out;
  };
  const std::vector<std::string> lf = losses(full), lr = losses(rest);
  ASSERT_EQ(lf.size(), 12u);
  ASSERT_EQ(lr.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(lf[6 + i], lr[i]);
  std::fclose(sink);
}

INSTANTIATE_TEST_SUITE_P(Precisions, GraphModelResume,
                         testing::Values(Precision::fp32, Precision::bf16, Precision::fp16),
                         [](const auto& row) { return std::string(precision_name(row.param)); });

TEST(GraphModel, CheckpointOfAnotherShapeIsRefused) {
  TempDir dir;
  const Corpus corpus = fox_corpus();
  TrainConfig c = tiny(dir, Precision::fp32);
  const auto model = make_graph_model(c, corpus.vocabulary.size());
  TrainCheckpoint saved = make_checkpoint(*model, corpus, c, 0, 1, {}, {});
  c.width = 32;
  const auto wider = make_graph_model(c, corpus.vocabulary.size());
  EXPECT_THROW(check_checkpoint_tensors(saved, trainer_tensor_specs(wider->trainer()), "c"), Error);
  EXPECT_NO_THROW(check_checkpoint_tensors(saved, trainer_tensor_specs(model->trainer()), "c"));
  try {
    wider->restore_state(saved, "c");
    FAIL() << "restore_state took a checkpoint of another shape";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("c: ", 0), 0u) << e.what();
  }
  // Weights first (no ':'), then the optimizer state (names with ':').
  bool state = false;
  for (const SafeTensor& t : saved.tensors) {
    const bool has_colon = t.name.find(':') != std::string::npos;
    EXPECT_TRUE(has_colon || !state) << t.name;
    state = state || has_colon;
  }
  EXPECT_TRUE(state);
}

TEST(GraphModel, MlpTrainsAndSamples) {
  TempDir dir;
  std::FILE* sink = std::tmpfile();
  const Corpus corpus = fox_corpus();
  TrainConfig c = tiny(dir, Precision::fp32);
  c.model = ModelKind::mlp;
  c.checkpoint.reset(), c.log.reset();
  c.sample_tokens = 10;
  const auto model = make_graph_model(c, corpus.vocabulary.size());
  const RunSummary s = run_training(*model, corpus, c, nullptr, quiet(sink));
  EXPECT_LT(s.validation_loss, s.validation_curve.front().loss);
  EXPECT_EQ(s.samples.size(), 3u);
  std::fclose(sink);
}

}  // namespace
}  // namespace ampkit::tools::train

#endif  // __has_include("ampkit/train/trainer.hpp")
