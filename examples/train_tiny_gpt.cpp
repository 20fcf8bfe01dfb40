// ampkit as a library: train a tiny GPT in bf16 mixed precision on a repeating token pattern and
// watch the loss fall. Built by CMake (target ampkit_example_train_tiny_gpt) and run by CTest;
// the README shows it. The same Trainer is what `ampkit train` drives.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ampkit/core/error.hpp"
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
  double first = 0.0, last = 0.0;
  for (int step = 1; step <= 30; ++step) {
    const train::StepResult r = trainer.step(tokens, targets);
    if (step == 1) first = r.loss;
    last = r.loss;
    if (step % 10 == 0) std::printf("step %2d  loss %.4f\n", step, r.loss);
  }
  std::printf("loss %.4f -> %.4f\n", first, last);
  return last < 0.5 * first ? 0 : 1;  // CTest: the model must learn the pattern
} catch (const ampkit::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
