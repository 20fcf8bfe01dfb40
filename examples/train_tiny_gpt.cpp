// ampkit as a library: train a tiny GPT in bf16 mixed precision on a repeating token pattern,
// watch the loss fall, save a checkpoint halfway and resume from it in a fresh trainer: the
// resumed run's losses and weights are bit for bit those of the run that never stopped. Built by
// CMake (target ampkit_example_train_tiny_gpt) and run by CTest; the README shows it. The same
// Trainer and checkpoint are what `ampkit train` drives.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/train/checkpoint.hpp"
#include "ampkit/train/trainer.hpp"

int main() try {
  using namespace ampkit;
  train::GptConfig model;  // token + position embedding, pre-norm blocks, LayerNorm, head
  model.vocab = 16, model.seq_len = 32, model.dim = 32, model.heads = 2, model.layers = 2;
  train::TrainerConfig config;
  config.batch = 8;
  config.compute = DType::bf16;  // bf16 activations and GEMMs, fp32 master weights
  config.optimizer.lr = 3e-3f;
  config.clip_norm = 1.0f;
  train::Trainer trainer = train::Trainer::gpt(model, config);

  // Row r is the sequence r, r+1, r+2, ... (mod 16); the target of each token is the next one.
  std::vector<std::int32_t> tokens, targets;
  for (std::int32_t r = 0; r < 8; ++r)
    for (std::int32_t t = 0; t < 32; ++t) {
      tokens.push_back((r + t) % 16);
      targets.push_back((r + t + 1) % 16);
    }
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/ampkit_example_tiny_gpt.safetensors";
  double first = 0.0, last = 0.0;
  std::vector<double> losses;  // of steps 16..30
  for (int step = 1; step <= 30; ++step) {
    const train::StepResult r = trainer.step(tokens, targets);
    if (step == 1) first = r.loss;
    last = r.loss;
    if (step > 15) losses.push_back(r.loss);
    if (step % 10 == 0) std::printf("step %2d  loss %.4f\n", step, r.loss);
    if (step == 15) {  // the trainer's state and a note of our own, written atomically
      train::Checkpoint checkpoint;
      checkpoint.metadata = {{"example", "train_tiny_gpt"}};
      checkpoint.step = step;
      train::save_trainer_state(trainer, checkpoint);
      train::save_checkpoint(path, checkpoint);
    }
  }
  std::printf("loss %.4f -> %.4f\n", first, last);

  // A fresh trainer (same configuration) resumed from step 15 runs steps 16..30 again.
  train::Trainer resumed = train::Trainer::gpt(model, config);
  const train::Checkpoint saved = train::load_checkpoint(path);
  train::restore_trainer_state(resumed, saved, "checkpoint '" + path + "'");
  std::remove(path.c_str());
  bool same = true;
  for (std::size_t i = 0; i < losses.size(); ++i) same = same && resumed.step(tokens, targets).loss == losses[i];
  const std::vector<train::NamedTensor> a = trainer.tensors(), b = resumed.tensors();
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::int64_t j = 0; j < a[i].numel(); ++j) same = same && a[i].data[j] == b[i].data[j];
  std::printf("resumed at step %lld from %s: %s\n", static_cast<long long>(saved.step), path.c_str(),
              same ? "the same losses and weights, bit for bit" : "DIFFERENT from the uninterrupted run");
  return last < 0.5 * first && same ? 0 : 1;  // CTest: the model must learn the pattern and resume exactly
} catch (const ampkit::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
