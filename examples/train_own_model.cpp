// ampkit as a library, with a model of your own: a one-block decoder defined with the
// graph::Builder — token + position embedding, RMSNorm (not LayerNorm), causal attention, a GELU
// MLP, and an output projection tied to the token table (one tensor, its gradient the sum of both
// uses) — trained in bf16 mixed precision by train::Trainer::from_graph on a repeating token
// pattern, then saved and restored. Built by CMake (target ampkit_example_train_own_model) and
// run by CTest: it fails unless the loss halves and the restored trainer continues bit for bit.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/builder.hpp"
#include "ampkit/train/checkpoint.hpp"
#include "ampkit/train/trainer.hpp"

namespace {

using namespace ampkit;
constexpr std::int64_t kBatch = 8, kSeq = 32, kVocab = 16, kDim = 32, kHeads = 2;

train::ModelGraph own_model() {
  train::ModelGraph m;
  graph::Builder b(m.graph, {DType::bf16});  // activations in bf16; parameters are fp32 masters
  train::ParameterList p(b);                 // records each parameter's initialization
  m.tokens = b.input("tokens", DType::i32, {kBatch, kSeq});
  m.positions = b.input("positions", DType::i32, {kBatch, kSeq});  // the trainer fills 0..seq-1
  m.targets = b.input("targets", DType::i32, {kBatch, kSeq});
  const graph::ValueId table = p.weight("tok_emb", {kVocab, kDim});
  const graph::ValueId pos_table = p.weight("pos_emb", {kSeq, kDim});
  graph::ValueId x =
      b.add(b.embedding(m.tokens, table, "tok_emb"), b.embedding(m.positions, pos_table, "pos_emb"), "embed");
  // x = x + proj(attention(qkv(rms1(x))))
  const graph::ValueId g1 = p.ones("rms1.g", kDim);
  const graph::ValueId qkv_w = p.weight("qkv.w", {3 * kDim, kDim});
  const graph::ValueId qkv_b = p.zeros("qkv.b", 3 * kDim);
  const graph::ValueId proj_w = p.weight("proj.w", {kDim, kDim});
  const graph::ValueId proj_b = p.zeros("proj.b", kDim);
  graph::ValueId h = b.linear(b.rms_norm(x, g1, 1e-5f, "rms1"), qkv_w, qkv_b, "qkv");
  h = b.linear(b.attention(h, kHeads, "attn"), proj_w, proj_b, "proj");
  x = b.add(x, h, "res1");
  // x = x + fc2(gelu(fc1(rms2(x))))
  const graph::ValueId g2 = p.ones("rms2.g", kDim);
  const graph::ValueId fc1_w = p.weight("fc1.w", {4 * kDim, kDim});
  const graph::ValueId fc1_b = p.zeros("fc1.b", 4 * kDim);
  const graph::ValueId fc2_w = p.weight("fc2.w", {kDim, 4 * kDim});
  const graph::ValueId fc2_b = p.zeros("fc2.b", kDim);
  h = b.gelu(b.linear(b.rms_norm(x, g2, 1e-5f, "rms2"), fc1_w, fc1_b, "fc1"), GeluVariant::tanh, "fc1.act");
  x = b.add(x, b.linear(h, fc2_w, fc2_b, "fc2"), "res2");
  // The head: the token table again ([vocab, dim] is Linear's [out, in]): weight tying.
  const graph::ValueId g3 = p.ones("rms_f.g", kDim);
  m.logits = b.linear(b.rms_norm(x, g3, 1e-5f, "rms_f"), table, graph::kNoValue, "head");
  m.loss = b.softmax_cross_entropy(m.logits, m.targets, "loss");
  m.graph.outputs = {m.loss};
  m.parameters = p.list();
  return m;
}

}  // namespace

int main() try {
  train::TrainerConfig config;
  config.batch = kBatch;
  config.compute = DType::bf16;
  config.optimizer.lr = 3e-3f;
  config.clip_norm = 1.0f;
  train::Trainer trainer = train::Trainer::from_graph(own_model(), config);
  std::printf("own model: %lld parameters in %zu tensors (tok_emb is also the head)\n",
              static_cast<long long>(trainer.parameter_count()), trainer.parameter_names().size());

  std::vector<std::int32_t> tokens, targets;  // row r: r, r+1, ... (mod 16); target: the next id
  for (std::int32_t r = 0; r < kBatch; ++r)
    for (std::int32_t t = 0; t < kSeq; ++t) {
      tokens.push_back((r + t) % kVocab);
      targets.push_back((r + t + 1) % kVocab);
    }
  const char* tmp = std::getenv("TMPDIR");
  const std::string path = std::string(tmp ? tmp : "/tmp") + "/ampkit_example_own_model.safetensors";
  double first = 0.0, last = 0.0;
  std::vector<double> losses;  // of steps 21..40
  for (int step = 1; step <= 40; ++step) {
    const train::StepResult r = trainer.step(tokens, targets);
    if (step == 1) first = r.loss;
    last = r.loss;
    if (step > 20) losses.push_back(r.loss);
    if (step % 10 == 0) std::printf("step %2d  loss %.4f\n", step, r.loss);
    if (step == 20) {
      train::Checkpoint checkpoint;
      checkpoint.step = step;
      train::save_trainer_state(trainer, checkpoint);
      train::save_checkpoint(path, checkpoint);
    }
  }
  std::printf("loss %.4f -> %.4f\n", first, last);

  train::Trainer resumed = train::Trainer::from_graph(own_model(), config);  // a fresh one, restored
  train::restore_trainer_state(resumed, train::load_checkpoint(path), "checkpoint '" + path + "'");
  std::remove(path.c_str());
  bool same = true;
  for (double loss : losses) same = same && resumed.step(tokens, targets).loss == loss;
  std::printf("restored at step 20: %s\n", same ? "the same losses, bit for bit" : "DIFFERENT losses");
  return last < 0.5 * first && same ? 0 : 1;
} catch (const ampkit::Error& e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
