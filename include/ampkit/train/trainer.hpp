// The trainer (train layer, public): builds a small GPT or an MLP (models.hpp) from a config
// struct, run training steps on batches of int32 token ids / targets, evaluate
// the loss without a backward pass, read logits for sampling, and get / set every named tensor
// (fp32 master parameters and optimizer state) and the loss-scale state for checkpoints.
// Called by `ampkit train` (tools/ampkit/train/), checkpoint.hpp and users; built on the graph
// layer's builder, autodiff, passes and executor (docs/GRAPH.md, docs/TRAIN.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ampkit/core/dtype.hpp"
#include "ampkit/core/tensor.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/train/models.hpp"

namespace ampkit::dist {
class Communicator;
}  // namespace ampkit::dist

namespace ampkit::train {

enum class OptimizerKind : std::uint8_t { adamw, sgd };

/// Hyper-parameters of the optimizer (ops/optimizer.hpp). Weight decay applies to every
/// parameter of rank >= 2 (weights and embedding tables), not to biases and norm gains.
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::adamw;
  float lr = 1e-3f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;  // AdamW
  float momentum = 0.0f;                            // SGD
  float weight_decay = 0.0f;
};

/// Dynamic loss scaling (fp16 compute only; ignored otherwise): the loss gradient is seeded
/// with `scale`; a step whose gradients are not all finite is skipped and the scale multiplied
/// by `backoff`; after `growth_interval` consecutive finite steps it is multiplied by `growth`.
struct LossScaleConfig {
  float initial_scale = 65536.0f;
  float growth = 2.0f;
  float backoff = 0.5f;
  std::int64_t growth_interval = 2000;
  float min_scale = 1.0f;  // the scale never goes below this
};

struct TrainerConfig {
  std::int64_t batch = 8;          // sequences per micro-batch
  std::int64_t micro_batches = 1;  // gradient accumulation: step() takes micro_batches*batch rows
  DType compute = DType::f32;      // f32, bf16 or f16 (autocast; fp32 master parameters)
  OptimizerConfig optimizer;
  float clip_norm = 0.0f;  // > 0: clip the global gradient norm to this value
  LossScaleConfig loss_scale;
  bool fuse = true;  // run the fusion passes (GEMM+GELU, DGELU_BGRAD)
  // Where the step runs: the cpu, or one GPU (cuda:device_index). On a GPU the whole step stays
  // in device memory — the graph, the fp32 master parameters, the optimizer state, gradient
  // accumulation, the norm, clipping, loss scaling and the skip decision (ops::MultiTensorStep);
  // per run only the ids go up, per step 80 bytes of results come back (docs/TRAIN.md). The
  // state is downloaded by tensors() and uploaded again before the next run.
  Device device = Device::cpu;
  int device_index = 0;
  std::uint64_t seed = 0;  // parameter initialization (N(0, 0.02) weights, 0 biases,
                           // 1 norm gains); the same seed gives the same bits
  // Data parallelism (docs/TRAIN.md "Scaling out"): null or a communicator of size 1 is one
  // process, bit for bit. With N > 1 ranks every rank builds the same trainer (same seed: the
  // same initial parameters), passes its own rows to step(), and after backward the gradients
  // (and the loss) of all ranks are summed in the communicator's fixed rank order and divided by
  // N, so every rank applies the same update. Every rank must call step() the same number of
  // times. Not owned; it must outlive the trainer. cpu only: with
  // device cuda and more than one rank the trainer refuses (ErrorKind::unsupported).
  dist::Communicator* communicator = nullptr;
  // Over N > 1 ranks: the gradients are summed in buckets of at least this many bytes of fp32
  // gradient (whole parameters, in the order the backward produces them), each launched on a
  // communication thread as soon as its last gradient is produced, so the sums overlap the rest
  // of the backward. 0: one bucket after the backward. The bits do not depend on it.
  std::size_t bucket_bytes = std::size_t{256} << 10;
  // 1: ZeRO-1 over N > 1 ranks: the gradients are reduce-scattered, each rank keeps and updates
  // its 1/N shard of the optimizer's moments (and of the parameters, then all-gathered); the
  // weights equal zero = 0's bit for bit. tensors() then shows a full staging copy of the
  // moments, filled by gather_state() (a collective). 0: every rank holds everything. cpu only.
  int zero = 0;
};

/// The data-parallel communication of the steps so far (zeros on one process).
struct CommunicationStats {
  double collective_s = 0.0;              // seconds the communication thread spent in collectives
  double waited_s = 0.0;                  // seconds step() waited for them after its backward (not overlapped)
  int buckets = 0;                        // gradient buckets per step
  std::size_t optimizer_state_bytes = 0;  // the moments this rank updates (ZeRO-1: its shard's)
};

/// What one step did.
struct StepResult {
  double loss = 0.0;        // mean loss over the micro-batches (unscaled; over N ranks: the mean
                            // of the ranks' losses, each rounded to float)
  double grad_norm = 0.0;   // global gradient norm before clipping (unscaled; NaN/Inf if so)
  bool skipped = false;     // non-finite gradients: the parameters were not updated
  float loss_scale = 1.0f;  // the scale used by this step
};

/// The loss-scale state (part of a checkpoint).
struct LossScaleState {
  float scale = 1.0f;
  std::int64_t good_steps = 0;     // consecutive finite steps since the last change
  std::int64_t skipped_steps = 0;  // total steps skipped
};

/// One named fp32 tensor owned by the trainer: a master parameter (name like "h0.mlp.fc1.w")
/// or an optimizer state tensor ("<param>:adam_m", "<param>:adam_v", "<param>:momentum").
/// `data` stays valid for the trainer's lifetime; writing through it sets the tensor.
struct NamedTensor {
  std::string name;
  DType dtype = DType::f32;
  std::vector<std::int64_t> shape;
  float* data = nullptr;
  std::int64_t numel() const;
};

/// Per-node timing of the last run (forward and backward), for reports.
struct NodeTiming {
  std::string op;    // "Linear", "LayerNormBackward", ...
  std::string name;  // the node's name, e.g. "h0.attn.qkv"
  bool backward = false;
  double seconds = 0.0;
};

/// The fp16 GEMMs of one node, summed over every run of step() (forward and backward of every
/// micro-batch). Under Fp16Mode::flush the subnormal values were flushed to zero; under exact and
/// alt an MI200 would have flushed them (alt rounds the operands to bf16, which has no such
/// subnormals: the counts say what the alternate path rescued).
struct NodeFp16Totals {
  int node = 0;                     // index in the training graph
  std::string op;                   // "Linear", "LinearBackward"
  std::string name;                 // "h0.mlp.fc1", "h0.mlp.fc1.bwd"
  bool backward = false;            // tagged as backward (ran inside a BackwardPassGuard)
  Fp16Mode mode = Fp16Mode::exact;  // the mode of the last run
  std::int64_t gemm_calls = 0;
  std::int64_t subnormal_inputs = 0;   // f16 subnormal GEMM operand elements read
  std::int64_t subnormal_outputs = 0;  // f16 GEMM outputs that rounded to a subnormal
};

class Trainer {
 public:
  /// Builds the model's training graph (forward, autodiff, passes, memory plan) and initializes
  /// the parameters from config.seed. Throws ampkit::Error naming the field on a bad config
  /// (non-positive sizes, dim not a multiple of heads, compute not f32/bf16/f16, ...).
  static Trainer gpt(const GptConfig& model, const TrainerConfig& config);
  static Trainer mlp(const MlpConfig& model, const TrainerConfig& config);
  /// The trainer of any forward graph a graph::Builder made (a user's own model; gpt() and mlp()
  /// are this on build_gpt / build_token_mlp): `model` names its values — tokens and targets
  /// (i32 inputs [config.batch, seq]), optionally positions (an i32 input of the same shape, which
  /// the trainer fills with t at position t), logits ([config.batch, seq, vocab]) and the loss (an
  /// f32 scalar) — and lists every parameter of the graph once with its initialization. seq and
  /// vocab are read from those shapes; ids are checked against vocab. A parameter used several
  /// times (weight tying) gets the sum of its uses' gradients, in the graph's fixed order. Throws
  /// ampkit::Error "train::Trainer::from_graph: ..." naming the first value or parameter that
  /// does not fit, and the config errors of gpt().
  static Trainer from_graph(ModelGraph model, const TrainerConfig& config);

  Trainer(Trainer&&) noexcept;
  Trainer& operator=(Trainer&&) noexcept;
  ~Trainer();

  /// One optimizer step. tokens, targets: [micro_batches * batch, seq_len] int32, row-major;
  /// each id in [0, vocab). Runs forward + backward per micro-batch (gradients accumulated),
  /// checks finiteness (fp16 loss scaling), clips, updates. Throws ampkit::Error (parameters
  /// untouched) on a wrong size or an id out of range.
  StepResult step(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets);

  /// Mean loss of one batch ([batch, seq_len] tokens and targets) without backward or update.
  double evaluate(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets);

  /// Forward only: writes logits [batch, seq_len, vocab] (f32, row-major) for `tokens`
  /// ([batch, seq_len]). The GPT is causal, so position t depends on tokens[0..t] only: to
  /// sample from a shorter context, pad the rest with any valid id and read position t.
  void logits(std::span<const std::int32_t> tokens, std::span<float> out);

  /// Every named tensor: the parameters first (in model order), then the optimizer state (under
  /// ZeRO-1: the copy of the last gather_state() since the last step, which frees it; zeros when
  /// none was gathered). The views stay valid until the next step().
  std::vector<NamedTensor> tensors();
  /// Names of the parameters only, in model order.
  std::vector<std::string> parameter_names() const;
  /// Copies `values` (numel floats) into the tensor `name` (under ZeRO-1, a moment: this rank's
  /// shard of it). Throws ampkit::Error on an unknown name or a wrong count. The compute copies
  /// are refreshed at the next step.
  void set_tensor(const std::string& name, std::span<const float> values);

  /// The learning rate of the next steps (a schedule sets it before each step); finite, >= 0.
  /// Throws ampkit::Error otherwise.
  void set_learning_rate(float lr);

  /// Optimizer steps taken (skipped steps not counted); AdamW bias correction uses it.
  std::int64_t step_count() const;
  void set_step_count(std::int64_t steps);

  LossScaleState loss_scale() const;
  void set_loss_scale(const LossScaleState& state);

  const GptConfig* gpt_config() const;  // null for an MLP
  const MlpConfig* mlp_config() const;  // null for a GPT
  const TrainerConfig& config() const;

  /// Per-node timings of the last forward+backward run.
  std::vector<NodeTiming> node_timings() const;
  /// Every node that ran an fp16 GEMM in step(), in graph order of first appearance, with its
  /// counters summed since the trainer was built. Empty for f32 and bf16 compute.
  std::vector<NodeFp16Totals> fp16_node_totals() const;
  /// The training graph as text (graph/ir.hpp dump), after the passes.
  std::string graph_dump() const;
  /// The data-parallel communication so far (TrainerConfig::communicator of size > 1).
  CommunicationStats communication() const;
  /// ZeRO-1 (TrainerConfig::zero = 1 over N > 1 ranks): gathers every rank's shard of the
  /// moments into the copies tensors() shows. A collective: every rank must call it (before a
  /// checkpoint is saved). Does nothing otherwise.
  void gather_state();
  /// Elements of the parameters (fp32 masters), summed.
  std::int64_t parameter_count() const;

 private:
  struct State;
  explicit Trainer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace ampkit::train
