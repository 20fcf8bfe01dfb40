// The argument checks of train::Trainer (train layer): see trainer_checks.hpp.
#include "train/trainer_checks.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/dist/communicator.hpp"
#include "ampkit/train/checkpoint.hpp"

namespace ampkit::train {

using graph::Graph;
using graph::kNoValue;
using graph::Value;
using graph::ValueId;
using graph::ValueKind;

void check_config(const TrainerConfig& c) {
  const char* fn = "train::Trainer";
  if (c.micro_batches < 1) fail(fn, "micro_batches must be >= 1, but got ", c.micro_batches);
  if (!is_float_dtype(c.compute)) fail(fn, "compute must be f32, bf16 or f16, but got ", dtype_name(c.compute));
  if (c.device != Device::cpu && c.device != Device::cuda)
    fail(fn, "device must be cpu or cuda, but got the value ", static_cast<int>(c.device));
  if (c.device == Device::cuda) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) fail_with(ErrorKind::unsupported, fn, "device is cuda, but ", why);
    if (c.device_index < 0 || c.device_index >= cuda_device_count())
      fail(fn, "device_index must name a CUDA device in [0, ", cuda_device_count(), "), but got ", c.device_index);
    if (c.communicator != nullptr && c.communicator->size() > 1)
      fail_with(ErrorKind::unsupported, fn, "device is cuda with a communicator of ", c.communicator->size(),
                " ranks, but data parallelism runs on the cpu only (for now)");
  }
  if (c.zero != 0 && c.zero != 1) fail(fn, "zero must be 0 (off) or 1 (ZeRO-1), but got ", c.zero);
  if (c.zero == 1 && c.device != Device::cpu) fail_with(ErrorKind::unsupported, fn, "zero 1 needs device cpu");
  const OptimizerConfig& o = c.optimizer;
  if (o.kind != OptimizerKind::adamw && o.kind != OptimizerKind::sgd)
    fail(fn, "optimizer.kind must be adamw or sgd, but got the value ", static_cast<int>(o.kind));
  auto finite_nonneg = [&](const char* field, float v) {
    if (!(v >= 0.0f) || !std::isfinite(v)) fail(fn, field, " must be finite and >= 0, but got ", v);
  };
  finite_nonneg("optimizer.lr", o.lr);
  finite_nonneg("optimizer.eps", o.eps);
  finite_nonneg("optimizer.weight_decay", o.weight_decay);
  finite_nonneg("clip_norm", c.clip_norm);
  auto unit = [&](const char* field, float v) {
    if (!(v >= 0.0f && v < 1.0f)) fail(fn, field, " must be in [0, 1), but got ", v);
  };
  unit("optimizer.beta1", o.beta1);
  unit("optimizer.beta2", o.beta2);
  unit("optimizer.momentum", o.momentum);
}

void check_model_graph(const ModelGraph& m, std::int64_t batch) {
  const char* fn = "train::Trainer::from_graph";
  const Graph& g = m.graph;
  auto value = [&](ValueId id, const char* what) -> const Value& {
    if (id < 0 || id >= static_cast<ValueId>(g.values.size()))
      fail(fn, what, " must name a value of the graph (", g.values.size(), " values), but got ", id);
    return g.value(id);
  };
  const Value& tokens = value(m.tokens, "tokens");
  if (tokens.kind != ValueKind::input || tokens.dtype != DType::i32 || tokens.shape.size() != 2 ||
      tokens.shape[0] != batch || tokens.shape[1] < 1)
    fail(fn, "tokens must be an i32 input [batch = ", batch, ", seq], but '", tokens.name, "' is ",
         dtype_name(tokens.dtype), " ", shape_string(tokens.shape));
  auto same_as_tokens = [&](ValueId id, const char* what) {
    const Value& v = value(id, what);
    if (v.kind != ValueKind::input || v.dtype != DType::i32 || v.shape != tokens.shape || id == m.tokens)
      fail(fn, what, " must be an i32 input ", shape_string(tokens.shape), " other than tokens, but '", v.name, "' is ",
           dtype_name(v.dtype), " ", shape_string(v.shape));
  };
  same_as_tokens(m.targets, "targets");
  if (m.positions != kNoValue) same_as_tokens(m.positions, "positions");
  const Value& logits = value(m.logits, "logits");
  if (logits.shape.size() != 3 || logits.shape[0] != batch || logits.shape[1] != tokens.shape[1] || logits.shape[2] < 1)
    fail(fn, "logits must be [batch = ", batch, ", seq = ", tokens.shape[1], ", vocab], but '", logits.name, "' is ",
         shape_string(logits.shape));
  const Value& loss = value(m.loss, "loss");
  if (loss.dtype != DType::f32 || !loss.shape.empty())
    fail(fn, "loss must be an f32 scalar, but '", loss.name, "' is ", dtype_name(loss.dtype), " ",
         shape_string(loss.shape));
  std::vector<int> listed(g.values.size(), 0);
  for (const ParameterInit& p : m.parameters) {
    const Value& v = value(p.value, "a parameter");
    if (v.kind != ValueKind::parameter) fail(fn, "the parameter list names '", v.name, "', which is not a parameter");
    if (++listed[static_cast<std::size_t>(p.value)] > 1)
      fail(fn, "the parameter list names '", v.name, "' twice (a tied weight is one parameter used twice)");
  }
  for (const Value& v : g.values)
    if (v.kind == ValueKind::parameter && listed[static_cast<std::size_t>(v.id)] == 0)
      fail(fn, "the graph's parameter '", v.name, "' is not in the parameter list (its initialization)");
  if (m.parameters.empty()) fail(fn, "the model has no parameters");
}

}  // namespace ampkit::train
