// The trainer (train layer): builds a model's training graph (models, autodiff, passes,
// executor), owns the fp32 master parameters, optimizer state, gradient accumulators and the
// input buffers, and runs steps: forward + backward per micro-batch, finiteness check and
// dynamic loss scaling (fp16), global-norm clipping, AdamW / SGD. Called by `ampkit train` and
// users through trainer.hpp.
#include "ampkit/train/trainer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include "ampkit/core/error.hpp"
#include "ampkit/device/cuda.hpp"
#include "ampkit/graph/autodiff.hpp"
#include "ampkit/graph/executor.hpp"
#include "ampkit/graph/passes.hpp"
#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/elementwise.hpp"
#include "ampkit/ops/optimizer.hpp"
#include "ampkit/train/models.hpp"
#include "train/loss_scaler.hpp"

namespace ampkit::train {

using graph::Executor;
using graph::ExecutorOptions;
using graph::GradientMap;
using graph::Graph;
using graph::kNoValue;
using graph::NodeRecord;
using graph::Value;
using graph::ValueId;

std::int64_t NamedTensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

namespace {

struct Param {
  std::string name;
  ValueId value = kNoValue, grad = kNoValue;
  std::vector<std::int64_t> shape;
  bool decay = true;
  std::vector<float> data, m, v, acc;  // master, AdamW m / SGD momentum, AdamW v, accumulator

  TensorView view(std::vector<float>& buf) const {
    return TensorView(buf.data(), DType::f32, shape.data(), static_cast<int>(shape.size()));
  }
};

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
  }
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

// N(0, 1) from the generator (Box-Muller on 53-bit uniforms): the same bits on every platform
// with the same libm.
double standard_normal(std::mt19937_64& rng) {
  const double u1 = (static_cast<double>(rng() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
  const double u2 = static_cast<double>(rng() >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

// Device memory from cuda_malloc, freed with cuda_free.
struct CudaFree {
  void operator()(void* p) const noexcept { cuda_free(p); }
};
using DeviceBuffer = std::unique_ptr<void, CudaFree>;

}  // namespace

struct Trainer::State {
  TrainerConfig config;
  std::optional<GptConfig> gpt;
  std::optional<MlpConfig> mlp;
  std::int64_t vocab = 0, seq = 0, batch = 0;
  ValueId tokens_value = kNoValue, targets_value = kNoValue, logits_value = kNoValue, loss_value = kNoValue;
  std::unique_ptr<Executor> exec;
  std::vector<Param> params;
  std::vector<std::int32_t> tokens, targets, positions;
  float seed = 1.0f;
  LossScaler scaler;
  bool scaling = false;
  std::int64_t steps = 0;
  std::vector<TensorView> grads, accs;
  std::string dump;
  // On a GPU (config.device == cuda): the device copies of the external values, and the host
  // copies of the gradients the optimizer reads (grads then views these).
  bool on_gpu = false;
  DeviceBuffer tokens_dev, targets_dev, positions_dev, seed_dev;
  std::vector<DeviceBuffer> params_dev;
  std::vector<std::vector<unsigned char>> grads_host;
  std::vector<NodeFp16Totals> fp16_totals;  // the fp16 GEMM nodes, summed over step()'s runs

  // Adds the last run's fp16 GEMM counters of each node to fp16_totals.
  void add_fp16_records() {
    const Graph& g = exec->graph();
    for (std::size_t i = 0; i < g.nodes.size(); ++i) {
      const NodeRecord& r = exec->records()[i];
      if (!r.fp16_gemm) continue;
      auto it = std::find_if(fp16_totals.begin(), fp16_totals.end(),
                             [&](const NodeFp16Totals& t) { return t.node == static_cast<int>(i); });
      if (it == fp16_totals.end()) {
        fp16_totals.push_back(
            {static_cast<int>(i), std::string(op_name(g.nodes[i].op)), g.nodes[i].name, r.backward, r.fp16_mode});
        it = fp16_totals.end() - 1;
      }
      it->mode = r.fp16_mode;
      it->gemm_calls += r.gemm_calls;
      it->subnormal_inputs += r.fp16_subnormal_inputs;
      it->subnormal_outputs += r.fp16_subnormal_outputs;
    }
  }

  explicit State(const TrainerConfig& c) : config(c), scaler(c.loss_scale) {}

  void build(ModelGraph m) {
    const GradientMap gm = build_backward(m.graph, m.loss);
    run_passes(m.graph, {.fuse = config.fuse});
    dump = graph::dump(m.graph);
    on_gpu = config.device == Device::cuda;
    exec = std::make_unique<Executor>(std::move(m.graph), ExecutorOptions{config.device, config.device_index});
    tokens_value = m.tokens;
    targets_value = m.targets;
    logits_value = m.logits;
    loss_value = m.loss;
    const std::size_t rows = static_cast<std::size_t>(batch * seq);
    tokens.assign(rows, 0);
    targets.assign(rows, 0);
    if (m.positions != kNoValue) {
      positions.resize(rows);
      for (std::size_t i = 0; i < rows; ++i)
        positions[i] = static_cast<std::int32_t>(static_cast<std::int64_t>(i) % seq);
    }
    if (on_gpu) {
      const std::size_t bytes = rows * sizeof(std::int32_t);
      tokens_dev.reset(device_alloc(bytes));
      targets_dev.reset(device_alloc(bytes));
      seed_dev.reset(device_alloc(sizeof(float)));
      exec->bind(m.tokens, tokens_dev.get());
      exec->bind(m.targets, targets_dev.get());
      exec->bind(gm.loss_seed, seed_dev.get());
      if (m.positions != kNoValue) {
        positions_dev.reset(device_alloc(bytes));
        cuda_copy_to_device(positions_dev.get(), positions.data(), bytes, config.device_index);
        exec->bind(m.positions, positions_dev.get());
      }
    } else {
      exec->bind(m.tokens, tokens.data());
      exec->bind(m.targets, targets.data());
      if (m.positions != kNoValue) exec->bind(m.positions, positions.data());
      exec->bind(gm.loss_seed, &seed);
    }
    scaling = config.compute == DType::f16;

    std::mt19937_64 rng(config.seed);
    for (const ParameterInit& init : m.parameters) {
      const Value& v = exec->graph().value(init.value);
      Param p;
      p.name = v.name;
      p.value = init.value;
      p.grad = gm.of(init.value);
      if (p.grad == kNoValue)
        fail_with(ErrorKind::internal, "train::Trainer", "parameter ", p.name, " has no gradient");
      p.shape = v.shape;
      p.decay = init.decay;
      const auto n = static_cast<std::size_t>(v.numel());
      p.data.resize(n);
      for (float& x : p.data)
        x = init.kind == InitKind::ones    ? 1.0f
            : init.kind == InitKind::zeros ? 0.0f
                                           : static_cast<float>(init.std * standard_normal(rng));
      if (config.optimizer.kind == OptimizerKind::adamw) {
        p.m.assign(n, 0.0f);
        p.v.assign(n, 0.0f);
      } else if (config.optimizer.momentum != 0.0f) {
        p.m.assign(n, 0.0f);
      }
      if (config.micro_batches > 1) p.acc.assign(n, 0.0f);
      params.push_back(std::move(p));
    }
    for (Param& p : params) {
      if (on_gpu) {
        params_dev.emplace_back(device_alloc(p.data.size() * sizeof(float)));
        exec->bind(p.value, params_dev.back().get());
        const TensorView g = exec->view(p.grad);
        grads_host.emplace_back(static_cast<std::size_t>(g.numel()) * dtype_size(g.dtype));
        grads.emplace_back(grads_host.back().data(), g.dtype, g.shape.data(), g.rank);
      } else {
        exec->bind(p.value, p.data.data());
        grads.push_back(exec->view(p.grad));
      }
      if (!p.acc.empty()) accs.push_back(p.view(p.acc));
    }
  }

  void* device_alloc(std::size_t bytes) const { return cuda_malloc(bytes, config.device_index); }

  // Runs nodes [begin, end): on a GPU, uploads the parameters (the fp32 masters), the ids and the
  // loss seed first, and downloads the gradients after a run that computed them.
  void run(int begin, int end) {
    if (on_gpu) {
      const int dev = config.device_index;
      const std::size_t id_bytes = tokens.size() * sizeof(std::int32_t);
      cuda_copy_to_device(tokens_dev.get(), tokens.data(), id_bytes, dev);
      cuda_copy_to_device(targets_dev.get(), targets.data(), id_bytes, dev);
      cuda_copy_to_device(seed_dev.get(), &seed, sizeof(float), dev);
      for (std::size_t i = 0; i < params.size(); ++i)
        cuda_copy_to_device(params_dev[i].get(), params[i].data.data(), params[i].data.size() * sizeof(float), dev);
    }
    exec->run(begin, end);
    if (on_gpu && end > yield())
      for (std::size_t i = 0; i < params.size(); ++i)
        cuda_copy_to_host(grads_host[i].data(), exec->view(params[i].grad).data, grads_host[i].size(),
                          config.device_index);
  }

  // ids must hold `rows` full sequences of ids in [0, vocab).
  void check_ids(const char* fn, const char* what, std::span<const std::int32_t> ids, std::int64_t rows) const {
    const auto want = static_cast<std::size_t>(rows * seq);
    if (ids.size() != want) fail(fn, what, " must hold ", rows, " x ", seq, " = ", want, " ids, but got ", ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids[i] < 0 || ids[i] >= vocab) fail(fn, what, "[", i, "] = ", ids[i], " is out of range [0, ", vocab, ")");
  }

  void load(std::span<const std::int32_t> t, std::span<const std::int32_t> y, std::int64_t micro) {
    const std::size_t n = tokens.size();
    std::memcpy(tokens.data(), t.data() + static_cast<std::size_t>(micro) * n, n * sizeof(std::int32_t));
    std::memcpy(targets.data(), y.data() + static_cast<std::size_t>(micro) * n, n * sizeof(std::int32_t));
  }

  double loss() const {
    float value = 0.0f;
    if (on_gpu)
      cuda_copy_to_host(&value, exec->view(loss_value).data, sizeof(float), config.device_index);
    else
      value = *static_cast<const float*>(exec->view(loss_value).data);
    return value;
  }
  int yield() const { return exec->graph().yield_index(); }
};

Trainer::Trainer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;
Trainer::~Trainer() = default;

Trainer Trainer::gpt(const GptConfig& model, const TrainerConfig& config) {
  check_config(config);
  auto s = std::make_unique<State>(config);
  s->gpt = model;
  s->vocab = model.vocab;
  s->seq = model.seq_len;
  s->batch = config.batch;
  s->build(build_gpt(model, config.batch, config.compute));
  return Trainer(std::move(s));
}

Trainer Trainer::mlp(const MlpConfig& model, const TrainerConfig& config) {
  check_config(config);
  auto s = std::make_unique<State>(config);
  s->mlp = model;
  s->vocab = model.vocab;
  s->seq = model.seq_len;
  s->batch = config.batch;
  s->build(build_token_mlp(model, config.batch, config.compute));
  return Trainer(std::move(s));
}

StepResult Trainer::step(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets) {
  State& s = *state_;
  const char* fn = "train::Trainer::step";
  const std::int64_t micro = s.config.micro_batches;
  s.check_ids(fn, "tokens", tokens, micro * s.batch);
  s.check_ids(fn, "targets", targets, micro * s.batch);
  StepResult r;
  s.seed = s.scaling ? s.scaler.scale() : 1.0f;
  r.loss_scale = s.seed;
  double loss_sum = 0.0;
  for (std::int64_t k = 0; k < micro; ++k) {
    s.load(tokens, targets, k);
    s.run(0, static_cast<int>(s.exec->graph().nodes.size()));
    s.add_fp16_records();
    loss_sum += s.loss();
    if (micro > 1)
      for (std::size_t i = 0; i < s.params.size(); ++i) {
        if (k == 0)
          convert(s.grads[i], s.accs[i]);
        else
          add_accumulate(s.grads[i], s.accs[i]);
      }
  }
  r.loss = loss_sum / static_cast<double>(micro);
  const std::span<const TensorView> grads =
      micro > 1 ? std::span<const TensorView>(s.accs) : std::span<const TensorView>(s.grads);
  const double unscale = 1.0 / (static_cast<double>(s.seed) * static_cast<double>(micro));
  r.grad_norm = global_grad_norm(grads) * unscale;
  const bool finite = all_finite(grads);
  if (s.scaling) s.scaler.update(finite);
  if (!finite) {
    r.skipped = true;
    return r;
  }
  const double clip = s.config.clip_norm;
  const double coef = clip > 0.0 && r.grad_norm > clip ? clip / (r.grad_norm + 1e-6) : 1.0;
  const auto grad_scale = static_cast<float>(unscale * coef);
  s.steps += 1;
  const OptimizerConfig& o = s.config.optimizer;
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    Param& p = s.params[i];
    const float wd = p.decay ? o.weight_decay : 0.0f;
    if (o.kind == OptimizerKind::adamw) {
      AdamWArgs a;
      a.param = p.view(p.data);
      a.grad = grads[i];
      a.m = p.view(p.m);
      a.v = p.view(p.v);
      a.lr = o.lr;
      a.beta1 = o.beta1;
      a.beta2 = o.beta2;
      a.eps = o.eps;
      a.weight_decay = wd;
      a.grad_scale = grad_scale;
      a.step = s.steps;
      adamw_step(a);
    } else {
      SgdArgs a;
      a.param = p.view(p.data);
      a.grad = grads[i];
      if (!p.m.empty()) a.momentum_buffer = p.view(p.m);
      a.lr = o.lr;
      a.momentum = o.momentum;
      a.weight_decay = wd;
      a.grad_scale = grad_scale;
      sgd_step(a);
    }
  }
  return r;
}

double Trainer::evaluate(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets) {
  State& s = *state_;
  s.check_ids("train::Trainer::evaluate", "tokens", tokens, s.batch);
  s.check_ids("train::Trainer::evaluate", "targets", targets, s.batch);
  s.load(tokens, targets, 0);
  s.run(0, s.yield());
  return s.loss();
}

void Trainer::logits(std::span<const std::int32_t> tokens, std::span<float> out) {
  State& s = *state_;
  const char* fn = "train::Trainer::logits";
  s.check_ids(fn, "tokens", tokens, s.batch);
  const auto want = static_cast<std::size_t>(s.batch * s.seq * s.vocab);
  if (out.size() != want) fail(fn, "out must hold batch x seq_len x vocab = ", want, " floats, but got ", out.size());
  std::memcpy(s.tokens.data(), tokens.data(), tokens.size() * sizeof(std::int32_t));
  s.run(0, s.yield());
  TensorView src = s.exec->view(s.logits_value);
  std::vector<unsigned char> host;  // on a GPU: the logits in their dtype, copied back
  if (s.on_gpu) {
    host.resize(static_cast<std::size_t>(src.numel()) * dtype_size(src.dtype));
    cuda_copy_to_host(host.data(), src.data, host.size(), s.config.device_index);
    src = TensorView(host.data(), src.dtype, src.shape.data(), src.rank);
  }
  convert(src, TensorView(out.data(), DType::f32, src.shape.data(), src.rank));
}

std::vector<NamedTensor> Trainer::tensors() {
  std::vector<NamedTensor> out;
  for (Param& p : state_->params) out.push_back({p.name, DType::f32, p.shape, p.data.data()});
  const bool adamw = state_->config.optimizer.kind == OptimizerKind::adamw;
  for (Param& p : state_->params) {
    if (p.m.empty()) continue;
    out.push_back({p.name + (adamw ? ":adam_m" : ":momentum"), DType::f32, p.shape, p.m.data()});
    if (adamw) out.push_back({p.name + ":adam_v", DType::f32, p.shape, p.v.data()});
  }
  return out;
}

std::vector<std::string> Trainer::parameter_names() const {
  std::vector<std::string> out;
  for (const Param& p : state_->params) out.push_back(p.name);
  return out;
}

void Trainer::set_tensor(const std::string& name, std::span<const float> values) {
  for (NamedTensor& t : tensors())
    if (t.name == name) {
      if (static_cast<std::int64_t>(values.size()) != t.numel())
        fail("train::Trainer::set_tensor", "'", name, "' has ", t.numel(), " elements, but got ", values.size());
      std::memcpy(t.data, values.data(), values.size() * sizeof(float));
      return;
    }
  fail("train::Trainer::set_tensor", "no tensor is named '", name, "'");
}

std::int64_t Trainer::step_count() const { return state_->steps; }
void Trainer::set_learning_rate(float lr) {
  if (!std::isfinite(lr) || lr < 0.0f)
    fail("train::Trainer::set_learning_rate", "lr must be finite and >= 0, but got ", lr);
  state_->config.optimizer.lr = lr;
}

void Trainer::set_step_count(std::int64_t steps) {
  if (steps < 0) fail("train::Trainer::set_step_count", "steps must be >= 0, but got ", steps);
  state_->steps = steps;
}

LossScaleState Trainer::loss_scale() const { return state_->scaler.state(); }
void Trainer::set_loss_scale(const LossScaleState& state) { state_->scaler.set_state(state); }

const GptConfig* Trainer::gpt_config() const { return state_->gpt ? &*state_->gpt : nullptr; }
const MlpConfig* Trainer::mlp_config() const { return state_->mlp ? &*state_->mlp : nullptr; }
const TrainerConfig& Trainer::config() const { return state_->config; }

std::vector<NodeTiming> Trainer::node_timings() const {
  std::vector<NodeTiming> out;
  const Graph& g = state_->exec->graph();
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    out.push_back({std::string(op_name(g.nodes[i].op)), g.nodes[i].name, g.nodes[i].attrs.backward,
                   state_->exec->records()[i].seconds});
  return out;
}

std::vector<NodeFp16Totals> Trainer::fp16_node_totals() const { return state_->fp16_totals; }

std::string Trainer::graph_dump() const { return state_->dump; }

}  // namespace ampkit::train
