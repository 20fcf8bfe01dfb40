// The model of `ampkit train` (tools layer, train/): the Trainer of a run configuration
// (ampkit/train/trainer.hpp) and the loop's seam over it. See model.hpp.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "tools/ampkit/common/progress.hpp"
#include "tools/ampkit/train/model.hpp"

namespace ampkit::tools::train {
namespace {

ampkit::train::LossScaleConfig loss_scale_config(const LossScaleSetting& s) {
  ampkit::train::LossScaleConfig c;  // dynamic: the runtime's defaults
  if (s.mode == LossScaleSetting::Mode::dynamic) return c;
  const auto scale = static_cast<float>(s.mode == LossScaleSetting::Mode::fixed ? s.value : 1.0);
  c.initial_scale = scale;
  c.growth = 1.0f;
  c.backoff = 1.0f;
  c.min_scale = scale;
  return c;
}

ampkit::train::TrainerConfig trainer_config(const TrainConfig& t, dist::Communicator* comm) {
  ampkit::train::TrainerConfig c;
  c.batch = t.batch;
  c.micro_batches = 1;
  c.compute = t.precision == Precision::fp32 ? DType::f32 : t.precision == Precision::bf16 ? DType::bf16 : DType::f16;
  c.optimizer.kind = ampkit::train::OptimizerKind::adamw;
  c.optimizer.lr = static_cast<float>(t.lr);
  c.optimizer.weight_decay = static_cast<float>(t.weight_decay);
  c.clip_norm = static_cast<float>(t.clip);
  c.loss_scale = loss_scale_config(t.loss_scale);
  c.seed = t.seed;
  c.device = t.cuda ? Device::cuda : Device::cpu;
  c.communicator = comm;
  c.bucket_bytes = static_cast<std::size_t>(t.bucket_mb * 1048576.0);
  c.zero = t.zero;
  return c;
}

ampkit::train::Trainer build_trainer(const TrainConfig& t, std::int64_t vocab, dist::Communicator* comm) {
  if (t.model == ModelKind::gpt) {
    ampkit::train::GptConfig g;
    g.vocab = vocab, g.seq_len = t.context, g.dim = t.width, g.heads = t.heads, g.layers = t.depth;
    return ampkit::train::Trainer::gpt(g, trainer_config(t, comm));
  }
  ampkit::train::MlpConfig m;
  m.vocab = vocab, m.seq_len = t.context, m.dim = t.width, m.hidden = t.hidden(), m.layers = t.depth;
  return ampkit::train::Trainer::mlp(m, trainer_config(t, comm));
}

}  // namespace

GraphModel::GraphModel(const TrainConfig& config, std::int64_t vocab, dist::Communicator* comm)
    : trainer_(build_trainer(config, vocab, comm)), rows_(config.batch), context_(config.context), vocab_(vocab) {}

ModelStep GraphModel::step(const Batch& batch, double lr) {
  trainer_.set_learning_rate(static_cast<float>(lr));  // the schedule's rate for this step
  const ampkit::train::StepResult r = trainer_.step(batch.tokens, batch.targets);
  return {r.loss, r.grad_norm, r.skipped, r.loss_scale};
}

double GraphModel::evaluate(const Batch& batch) { return trainer_.evaluate(batch.tokens, batch.targets); }

void GraphModel::logits(std::span<const std::int32_t> tokens, std::span<float> out) { trainer_.logits(tokens, out); }

void GraphModel::save_state(ampkit::train::Checkpoint& checkpoint) {
  ampkit::train::save_trainer_state(trainer_, checkpoint);
}

void GraphModel::restore_state(const ampkit::train::Checkpoint& checkpoint, std::string_view what) {
  ampkit::train::restore_trainer_state(trainer_, checkpoint, what);
}

void GraphModel::gather_state() { trainer_.gather_state(); }

double GraphModel::loss_scale() const { return trainer_.loss_scale().scale; }

std::unique_ptr<GraphModel> make_graph_model(const TrainConfig& config, std::int64_t vocab, dist::Communicator* comm) {
  return std::make_unique<GraphModel>(config, vocab, comm);
}

std::string describe_model(const TrainConfig& c, std::int64_t vocab, std::int64_t parameters) {
  const std::string count = format_count(static_cast<double>(parameters));
  if (c.model == ModelKind::gpt)
    return detail::concat("gpt: ", c.depth, c.depth == 1 ? " block" : " blocks", ", width ", c.width, ", ", c.heads,
                          c.heads == 1 ? " head" : " heads", ", context ", c.context, ", ", vocab,
                          " characters: ", count, " parameters");
  return detail::concat("mlp: ", c.depth, c.depth == 1 ? " hidden layer" : " hidden layers", " of ", c.hidden(),
                        ", width ", c.width, ", context ", c.context, ", ", vocab, " characters: ", count,
                        " parameters");
}

std::vector<Fp16LayerCounters> fp16_layers(const ampkit::train::Trainer& trainer) {
  std::vector<Fp16LayerCounters> layers;
  for (const ampkit::train::NodeFp16Totals& t : trainer.fp16_node_totals()) {
    // The backward node of layer "x" is "x.bwd" (graph/autodiff.cpp).
    const bool bwd = t.name.size() > 4 && t.name.ends_with(".bwd");
    const std::string layer = bwd ? t.name.substr(0, t.name.size() - 4) : t.name;
    auto it = std::find_if(layers.begin(), layers.end(), [&](const Fp16LayerCounters& l) { return l.layer == layer; });
    if (it == layers.end()) {
      layers.push_back({layer, {}, {}});
      it = layers.end() - 1;
    }
    Fp16LayerCounters::Pass& pass = t.backward ? it->backward : it->forward;
    pass.ran = true;
    pass.mode = t.mode;
    pass.gemm_calls += t.gemm_calls;
    pass.subnormal_inputs += t.subnormal_inputs;
    pass.subnormal_outputs += t.subnormal_outputs;
  }
  return layers;
}

}  // namespace ampkit::tools::train
