// The model of `ampkit train` built with the graph runtime (tools layer, train/): TrainModel on
// top of ampkit::train::Trainer (ampkit/train/trainer.hpp). The only file of the command that
// calls the runtime; everything else sees TrainModel (model.hpp).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ampkit/core/error.hpp"
#include "tools/ampkit/common/progress.hpp"
#include "tools/ampkit/train/model.hpp"

#if __has_include("ampkit/train/trainer.hpp")
#include "ampkit/train/trainer.hpp"
#define AMPKIT_TRAIN_HAVE_GRAPH 1
#endif

namespace ampkit::tools::train {

#ifdef AMPKIT_TRAIN_HAVE_GRAPH
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

class GraphModel final : public TrainModel {
 public:
  GraphModel(const TrainConfig& t, std::int64_t vocab, dist::Communicator* comm)
      : trainer_(build(t, vocab, comm)), config_(t), vocab_(vocab), parameters_(trainer_.parameter_count()) {}

  std::string describe() const override {
    const std::string count = format_count(static_cast<double>(parameters_));
    if (config_.model == ModelKind::gpt)
      return detail::concat("gpt: ", config_.depth, config_.depth == 1 ? " block" : " blocks", ", width ",
                            config_.width, ", ", config_.heads, config_.heads == 1 ? " head" : " heads", ", context ",
                            config_.context, ", ", vocab_, " characters: ", count, " parameters");
    return detail::concat("mlp: ", config_.depth, config_.depth == 1 ? " hidden layer" : " hidden layers", " of ",
                          config_.hidden(), ", width ", config_.width, ", context ", config_.context, ", ", vocab_,
                          " characters: ", count, " parameters");
  }
  std::int64_t parameter_count() const override { return parameters_; }
  std::int64_t rows() const override { return config_.batch; }
  std::int64_t context() const override { return config_.context; }
  std::int64_t vocab() const override { return vocab_; }

  ModelStep step(const Batch& batch, double lr) override {
    set_learning_rate(static_cast<float>(lr));
    const ampkit::train::StepResult r = trainer_.step(batch.tokens, batch.targets);
    return {r.loss, r.grad_norm, r.skipped, r.loss_scale};
  }
  double evaluate(const Batch& batch) override { return trainer_.evaluate(batch.tokens, batch.targets); }
  void logits(std::span<const std::int32_t> tokens, std::span<float> out) override { trainer_.logits(tokens, out); }

  std::vector<TensorSpec> tensor_specs() override { return ampkit::train::trainer_tensor_specs(trainer_); }
  void gather_state() override { trainer_.gather_state(); }
  std::vector<SafeTensor> save_tensors() override {
    ampkit::train::Checkpoint c;
    ampkit::train::save_trainer_state(trainer_, c);
    return c.tensors;
  }
  void load_tensors(const std::vector<SafeTensor>& tensors) override {
    for (const SafeTensor& t : tensors) {
      const std::vector<float> values = t.f32();
      trainer_.set_tensor(t.name, values);
    }
  }
  std::int64_t optimizer_steps() const override { return trainer_.step_count(); }
  void set_optimizer_steps(std::int64_t steps) override { trainer_.set_step_count(steps); }
  LossScaleSnapshot loss_scale() const override {
    const ampkit::train::LossScaleState s = trainer_.loss_scale();
    return {s.scale, s.good_steps, s.skipped_steps};
  }
  std::vector<Fp16LayerCounters> fp16_layers() const override {
    std::vector<Fp16LayerCounters> layers;
    for (const ampkit::train::NodeFp16Totals& t : trainer_.fp16_node_totals()) {
      // The backward node of layer "x" is "x.bwd" (graph/autodiff.cpp).
      const bool bwd = t.name.size() > 4 && t.name.ends_with(".bwd");
      const std::string layer = bwd ? t.name.substr(0, t.name.size() - 4) : t.name;
      auto it =
          std::find_if(layers.begin(), layers.end(), [&](const Fp16LayerCounters& l) { return l.layer == layer; });
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
  void set_loss_scale(const LossScaleSnapshot& s) override {
    trainer_.set_loss_scale({static_cast<float>(s.scale), s.good_steps, s.skipped_steps});
  }

 private:
  static ampkit::train::Trainer build(const TrainConfig& t, std::int64_t vocab, dist::Communicator* comm) {
    if (t.model == ModelKind::gpt) {
      ampkit::train::GptConfig g;
      g.vocab = vocab, g.seq_len = t.context, g.dim = t.width, g.heads = t.heads, g.layers = t.depth;
      return ampkit::train::Trainer::gpt(g, trainer_config(t, comm));
    }
    ampkit::train::MlpConfig m;
    m.vocab = vocab, m.seq_len = t.context, m.dim = t.width, m.hidden = t.hidden(), m.layers = t.depth;
    return ampkit::train::Trainer::mlp(m, trainer_config(t, comm));
  }

  // The schedule's rate for the next step.
  void set_learning_rate(float lr) { trainer_.set_learning_rate(lr); }

  ampkit::train::Trainer trainer_;
  TrainConfig config_;
  std::int64_t vocab_;
  std::int64_t parameters_ = 0;
};

}  // namespace

std::unique_ptr<TrainModel> make_graph_model(const TrainConfig& config, std::int64_t vocab, dist::Communicator* comm) {
  return std::make_unique<GraphModel>(config, vocab, comm);
}

#else

std::unique_ptr<TrainModel> make_graph_model(const TrainConfig&, std::int64_t, dist::Communicator*) {
  throw Error("this build of ampkit has no training-graph runtime (ampkit/train/trainer.hpp) yet",
              ErrorKind::unsupported);
}

#endif

}  // namespace ampkit::tools::train
