// Checkpoints of the train layer: one safetensors file (safetensors.hpp) holding a training
// run's state — the model's fp32 weights under their own names, the optimizer state and the loss
// curves under names with a ':' ("h0.attn.qkv.w:adam_m", "run:train_loss"), and in
// "__metadata__" the format tag, the caller's own string entries (insertion-ordered; `ampkit
// train` stores its run configuration there), the step counts, the data-order RNG state, the
// loss-scale state, the vocabulary and the data fingerprint. Written atomically (files.hpp);
// read back with every field checked. Called by `ampkit train`/`sample` and by C++ users
// (examples/train_tiny_gpt.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ampkit/train/corpus.hpp"
#include "ampkit/train/safetensors.hpp"
#include "ampkit/train/trainer.hpp"

namespace ampkit::train {

/// The "format" metadata value of the checkpoints this version writes and reads.
constexpr const char* kCheckpointFormat = "ampkit-train-1";
/// The largest checkpoint file read (64 GiB).
constexpr std::uint64_t kMaxCheckpointBytes = std::uint64_t{1} << 36;

/// The loss-scale state of the trainer (fp16 dynamic loss scaling).
struct LossScaleSnapshot {
  double scale = 1.0;
  std::int64_t good_steps = 0;     // consecutive finite steps since the last change
  std::int64_t skipped_steps = 0;  // steps skipped so far for non-finite gradients
  bool operator==(const LossScaleSnapshot&) const = default;
};

/// One point of a loss curve.
struct CurvePoint {
  std::int64_t step = 0;  // steps done when the loss was measured (1-based for training steps)
  double loss = 0.0;
  bool operator==(const CurvePoint&) const = default;
};

/// String metadata in insertion order (written in this order; keys unique).
using CheckpointMetadata = std::vector<std::pair<std::string, std::string>>;

struct Checkpoint {
  /// The caller's entries, written after "format" and before the state's own keys (which they
  /// may not reuse: format, step, optimizer_steps, data_rng, loss_scale, vocabulary,
  /// data_fingerprint).
  CheckpointMetadata metadata;
  std::int64_t step = 0;             // steps run, skipped ones included
  std::int64_t optimizer_steps = 0;  // steps that updated the parameters (AdamW's bias correction)
  std::uint64_t data_rng = 0;        // BatchSampler::state()
  LossScaleSnapshot loss_scale;
  Vocabulary vocabulary;               // empty when the tokens are not characters of a corpus
  std::uint64_t data_fingerprint = 0;  // Corpus::fingerprint
  std::vector<CurvePoint> train_curve, validation_curve;
  std::vector<SafeTensor> tensors;  // the model's: weights, then optimizer state

  /// The metadata value of `key` among the caller's entries, or null.
  const std::string* meta(std::string_view key) const;
};

/// The expected form of one model tensor, to check a loaded checkpoint against.
struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;  // F32
};

/// Throws ampkit::Error "checkpoint_to_file: ..." when a caller's metadata key is one of the
/// state's own.
SafeTensorsFile checkpoint_to_file(const Checkpoint& checkpoint);
/// Throws ampkit::Error "<what>: ..." when the format tag, a metadata field or a curve is
/// missing or malformed.
Checkpoint checkpoint_from_file(const SafeTensorsFile& file, std::string_view what);

/// Writes `checkpoint` to `path` atomically (files.hpp). Throws ampkit::Error.
void save_checkpoint(const std::string& path, const Checkpoint& checkpoint);
/// Reads and checks the checkpoint at `path`. Throws ampkit::Error "checkpoint '<path>': ...".
Checkpoint load_checkpoint(const std::string& path);

/// Checks that the checkpoint's model tensors are exactly `expected` (names, F32, shapes):
/// throws ampkit::Error "<what>: ..." naming the first missing, unexpected or mismatched tensor.
void check_checkpoint_tensors(const Checkpoint& checkpoint, const std::vector<TensorSpec>& expected,
                              std::string_view what);

/// The trainer's part of a checkpoint: its tensors (weights, then optimizer state, as
/// Trainer::tensors() lists them), its optimizer step count and its loss-scale state. The data
/// fields (step, data_rng, vocabulary, data_fingerprint, curves) and the metadata are the
/// caller's.
void save_trainer_state(Trainer& trainer, Checkpoint& checkpoint);
/// The forms of the trainer's tensors, for check_checkpoint_tensors.
std::vector<TensorSpec> trainer_tensor_specs(Trainer& trainer);
/// Sets the trainer's tensors, step count and loss-scale state from `checkpoint`, after
/// check_checkpoint_tensors against the trainer's own (throws ampkit::Error "<what>: ..." naming
/// the first tensor missing, extra or of another shape). Continuing from a restored trainer
/// gives the same bits as never having stopped (tests/train/trainer_checkpoint_test.cpp).
void restore_trainer_state(Trainer& trainer, const Checkpoint& checkpoint, std::string_view what);

/// "[384, 128]".
std::string shape_string(const std::vector<std::int64_t>& shape);

}  // namespace ampkit::train
