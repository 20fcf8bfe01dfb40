// Tests of a Trainer's checkpoint through the library (src/train/checkpoint: save_trainer_state,
// restore_trainer_state, save/load_checkpoint): a trainer restored from a file saved mid-run,
// into a trainer initialized from another seed, continues bit for bit like the run that never
// stopped (GPT in fp16 with dynamic loss scaling and AdamW; MLP with SGD momentum); a checkpoint
// of another model is refused naming the tensor.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/checkpoint.hpp"
#include "ampkit/train/trainer.hpp"
#include "tests/train/train_test_support.hpp"

namespace ampkit::train {
namespace {

struct Ids {
  std::vector<std::int32_t> tokens, targets;
};

// Rows of a shifting pattern over `vocab` tokens, different for each step.
Ids batch_of(std::int64_t rows, std::int64_t seq, std::int32_t vocab, int step) {
  Ids b;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t t = 0; t < seq; ++t) {
      const auto x = static_cast<std::int32_t>((r * 3 + t * (step % 3 + 1) + step) % vocab);
      b.tokens.push_back(x);
      b.targets.push_back((x + 1) % vocab);
    }
  return b;
}

std::vector<std::vector<float>> values_of(Trainer& t) {
  std::vector<std::vector<float>> out;
  for (const NamedTensor& n : t.tensors()) out.emplace_back(n.data, n.data + n.numel());
  return out;
}

// Runs `steps` steps on `whole`, saving at `at`; a second trainer from `make(other seed)` restored
// from the file runs the rest: the same losses, tensors, step count and loss scale.
template <typename Make>
void expect_exact_resume(Make&& make, std::int64_t rows, std::int64_t seq, std::int32_t vocab) {
  TempDir dir;
  const std::string path = dir.file("mid.safetensors");
  const int steps = 12, at = 5;
  Trainer whole = make(1);
  std::vector<double> losses;
  for (int s = 0; s < steps; ++s) {
    const Ids b = batch_of(rows, seq, vocab, s);
    losses.push_back(whole.step(b.tokens, b.targets).loss);
    if (s + 1 == at) {
      Checkpoint c;
      c.step = at;
      save_trainer_state(whole, c);
      save_checkpoint(path, c);
    }
  }
  Trainer resumed = make(99);  // other initial weights: the checkpoint must replace all of them
  Trainer fresh = make(1);
  ASSERT_NE(values_of(resumed), values_of(fresh));
  restore_trainer_state(resumed, load_checkpoint(path), "checkpoint");
  EXPECT_EQ(resumed.step_count(), at);
  for (int s = at; s < steps; ++s) {
    const Ids b = batch_of(rows, seq, vocab, s);
    EXPECT_EQ(resumed.step(b.tokens, b.targets).loss, losses[static_cast<std::size_t>(s)]) << "step " << s + 1;
  }
  EXPECT_EQ(values_of(resumed), values_of(whole));  // weights and optimizer state, bitwise
  EXPECT_EQ(resumed.step_count(), whole.step_count());
  EXPECT_EQ(resumed.loss_scale().scale, whole.loss_scale().scale);
  EXPECT_EQ(resumed.loss_scale().good_steps, whole.loss_scale().good_steps);
}

TEST(TrainerCheckpoint, Fp16GptResumesBitForBit) {
  GptConfig g;
  g.vocab = 11, g.seq_len = 8, g.dim = 16, g.heads = 2, g.layers = 1;
  expect_exact_resume(
      [&](std::uint64_t seed) {
        TrainerConfig c;
        c.batch = 3;
        c.compute = DType::f16;
        c.optimizer.lr = 1e-2f;
        c.clip_norm = 1.0f;
        c.loss_scale.growth_interval = 3;  // the scale changes during the run
        c.seed = seed;
        return Trainer::gpt(g, c);
      },
      3, 8, 11);
}

TEST(TrainerCheckpoint, SgdMomentumMlpResumesBitForBit) {
  MlpConfig m;
  m.vocab = 9, m.seq_len = 4, m.dim = 8, m.hidden = 16, m.layers = 1;
  expect_exact_resume(
      [&](std::uint64_t seed) {
        TrainerConfig c;
        c.batch = 2;
        c.optimizer.kind = OptimizerKind::sgd;
        c.optimizer.lr = 0.1f;
        c.optimizer.momentum = 0.9f;
        c.seed = seed;
        return Trainer::mlp(m, c);
      },
      2, 4, 9);
}

TEST(TrainerCheckpoint, AnotherModelsCheckpointIsRefusedByTensor) {
  MlpConfig m;
  m.vocab = 9, m.seq_len = 4, m.dim = 8, m.hidden = 16, m.layers = 1;
  TrainerConfig c;
  c.batch = 2;
  Trainer small = Trainer::mlp(m, c);
  Checkpoint saved;
  save_trainer_state(small, saved);
  m.hidden = 32;
  Trainer wider = Trainer::mlp(m, c);
  try {
    restore_trainer_state(wider, saved, "checkpoint 'c'");
    FAIL();
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("checkpoint 'c': the tensor '", 0), 0u) << what;
    EXPECT_NE(what.find("has shape"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace ampkit::train
