// The model as `ampkit train` sees it (tools layer, train/): what the training loop needs from a
// trainable language model — a step on a batch at a learning rate, the loss of a batch, logits,
// and its named tensors and counters for checkpoints. graph_model.cpp implements it with the
// graph runtime (ampkit/train/trainer.hpp): the only file of the command that calls the model;
// the tests implement it with a small exact model to test the loop on its own.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ampkit/ops/gemm.hpp"
#include "ampkit/train/corpus.hpp"
#include "tools/ampkit/train/config.hpp"
#include "tools/ampkit/train/run_checkpoint.hpp"

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

/// The fp16 GEMMs of one layer (a Linear: its forward node and its backward node), summed over
/// the training steps of this process (model.hpp's step()).
struct Fp16LayerCounters {
  std::string layer;  // "h0.mlp.fc1"
  struct Pass {
    bool ran = false;
    Fp16Mode mode = Fp16Mode::exact;
    std::int64_t gemm_calls = 0, subnormal_inputs = 0, subnormal_outputs = 0;
  } forward, backward;
};

class TrainModel {
 public:
  virtual ~TrainModel() = default;

  /// One line: "gpt: 2 blocks, width 128, 4 heads, context 64; 0.41M parameters".
  virtual std::string describe() const = 0;
  virtual std::int64_t parameter_count() const = 0;
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

  /// The tensors a checkpoint holds (weights first, then optimizer state), their copies, and
  /// setting them back (after check_checkpoint_tensors against tensor_specs()).
  virtual std::vector<TensorSpec> tensor_specs() = 0;
  virtual std::vector<SafeTensor> save_tensors() = 0;
  /// Before save_tensors() on the writing rank, called on every rank: ZeRO-1 gathers the shards
  /// of the optimizer state (a collective). Nothing otherwise.
  virtual void gather_state() {}
  virtual void load_tensors(const std::vector<SafeTensor>& tensors) = 0;
  virtual std::int64_t optimizer_steps() const = 0;
  virtual void set_optimizer_steps(std::int64_t steps) = 0;
  virtual LossScaleSnapshot loss_scale() const = 0;
  /// Per-layer fp16 GEMM counters (empty unless the compute is fp16).
  virtual std::vector<Fp16LayerCounters> fp16_layers() const { return {}; }
  virtual void set_loss_scale(const LossScaleSnapshot& state) = 0;
};

/// The model of `config` over `vocab` characters, built with the graph runtime (graph_model.cpp).
/// With a communicator of N > 1 ranks, its steps average the gradients over the ranks (every rank
/// builds the same model; config.batch is then this rank's rows). Throws ampkit::Error when the
/// runtime refuses the configuration.
std::unique_ptr<TrainModel> make_graph_model(const TrainConfig& config, std::int64_t vocab,
                                             dist::Communicator* comm = nullptr);

}  // namespace ampkit::tools::train
