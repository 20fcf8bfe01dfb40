// The model as `ampkit train` sees it (tools layer, train/). Two pieces:
// - TrainModel, the training loop's own seam (train_run.hpp): the three compute calls (a step on
//   a batch at a learning rate, the loss of a batch, logits), the model's part of a checkpoint
//   (saved into / restored from an ampkit::train::Checkpoint), and the batch shape it was built
//   for. The loop's tests implement it with a small exact model.
// - GraphModel, the command's model: an ampkit::train::Trainer (the library's GPT or MLP) built
//   from the run configuration, with the seam over it — its checkpoint part is the library's
//   save_trainer_state/restore_trainer_state. Everything else the command needs (the parameter
//   count, the loss-scale state, the fp16 counters, the tensor forms) it asks the Trainer.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ampkit/ops/gemm.hpp"
#include "ampkit/train/checkpoint.hpp"
#include "ampkit/train/corpus.hpp"
#include "ampkit/train/trainer.hpp"
#include "tools/ampkit/train/config.hpp"
#include "tools/ampkit/train/run_checkpoint.hpp"  // the train layer's names, unqualified

namespace ampkit::dist {
class Communicator;
}  // namespace ampkit::dist

namespace ampkit::tools::train {

/// What one training step did.
struct ModelStep {
  double loss = 0.0;        // mean loss of the batch (unscaled)
  double grad_norm = 0.0;   // global gradient norm before clipping
  bool skipped = false;     // non-finite gradients (fp16): no update, the loss scale backed off
  double loss_scale = 1.0;  // the scale this step used
};

/// The training loop's seam (run_training, make_checkpoint, sample_texts).
class TrainModel {
 public:
  virtual ~TrainModel() = default;

  /// Rows of every batch passed to step, evaluate and logits (the batch size the model was
  /// built for), and the tokens per row.
  virtual std::int64_t rows() const = 0;
  virtual std::int64_t context() const = 0;
  virtual std::int64_t vocab() const = 0;

  /// Forward, backward and an optimizer step at learning rate `lr` on `batch` (rows() x
  /// context()).
  virtual ModelStep step(const Batch& batch, double lr) = 0;
  /// The mean loss of `batch`, without backward or update.
  virtual double evaluate(const Batch& batch) = 0;
  /// Logits [rows(), context(), vocab()] of `tokens` [rows(), context()].
  virtual void logits(std::span<const std::int32_t> tokens, std::span<float> out) = 0;

  /// The model's part of a checkpoint: its tensors (weights first, then optimizer state), its
  /// optimizer step count and its loss-scale state (the fields save_trainer_state fills).
  virtual void save_state(ampkit::train::Checkpoint& checkpoint) = 0;
  /// Sets them back from `checkpoint`; throws ampkit::Error "<what>: ..." on tensors that are not
  /// the model's.
  virtual void restore_state(const ampkit::train::Checkpoint& checkpoint, std::string_view what) = 0;
  /// Before save_state() on the writing rank, called on every rank: ZeRO-1 gathers the shards of
  /// the optimizer state (a collective). Nothing otherwise.
  virtual void gather_state() {}
  /// The loss scale the next step uses (1 unless fp16 with loss scaling).
  virtual double loss_scale() const = 0;
};

/// The fp16 GEMMs of one layer (a Linear: its forward node and its backward node), summed over
/// the training steps of this process.
struct Fp16LayerCounters {
  std::string layer;  // "h0.mlp.fc1"
  struct Pass {
    bool ran = false;
    Fp16Mode mode = Fp16Mode::exact;
    std::int64_t gemm_calls = 0, subnormal_inputs = 0, subnormal_outputs = 0;
  } forward, backward;
};

/// `ampkit train`'s model: the Trainer of a run configuration, seen through the loop's seam.
class GraphModel final : public TrainModel {
 public:
  /// The model of `config` over `vocab` characters. With a communicator of N > 1 ranks, its
  /// steps average the gradients over the ranks (every rank builds the same model; config.batch
  /// is then this rank's rows). Throws ampkit::Error when the runtime refuses the configuration.
  GraphModel(const TrainConfig& config, std::int64_t vocab, dist::Communicator* comm = nullptr);

  ampkit::train::Trainer& trainer() { return trainer_; }
  const ampkit::train::Trainer& trainer() const { return trainer_; }

  std::int64_t rows() const override { return rows_; }
  std::int64_t context() const override { return context_; }
  std::int64_t vocab() const override { return vocab_; }
  ModelStep step(const Batch& batch, double lr) override;
  double evaluate(const Batch& batch) override;
  void logits(std::span<const std::int32_t> tokens, std::span<float> out) override;
  void save_state(ampkit::train::Checkpoint& checkpoint) override;
  void restore_state(const ampkit::train::Checkpoint& checkpoint, std::string_view what) override;
  void gather_state() override;
  double loss_scale() const override;

 private:
  ampkit::train::Trainer trainer_;
  std::int64_t rows_, context_, vocab_;
};

/// Builds the GraphModel of `config` (make_unique).
std::unique_ptr<GraphModel> make_graph_model(const TrainConfig& config, std::int64_t vocab,
                                             dist::Communicator* comm = nullptr);

/// One line: "gpt: 2 blocks, width 128, 4 heads, context 64, 65 characters: 0.41M parameters".
std::string describe_model(const TrainConfig& config, std::int64_t vocab, std::int64_t parameters);

/// The trainer's fp16 GEMM counters per layer (empty unless the compute is fp16).
std::vector<Fp16LayerCounters> fp16_layers(const ampkit::train::Trainer& trainer);

}  // namespace ampkit::tools::train
