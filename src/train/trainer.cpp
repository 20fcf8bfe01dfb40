// The trainer (train layer): builds a model's training graph (models, autodiff, passes,
// executor), owns the fp32 master parameters, optimizer state, gradient accumulators and the
// input buffers (each concern a small struct of State; a GPU's copies staged through the
// device's ops::Backend), and runs steps: forward + backward per micro-batch, finiteness check and
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
#include "ops/backend.hpp"
#include "train/data_parallel.hpp"
#include "train/loss_scaler.hpp"
#include "train/trainer_checks.hpp"

namespace ampkit::train {

using graph::Executor;
using graph::ExecutorOptions;
using graph::GradientMap;
using graph::Graph;
using graph::kNoValue;
using graph::NodeRecord;
using graph::Value;
using graph::ValueId;
using graph::ValueKind;

std::int64_t NamedTensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

namespace {

// One parameter: its graph values and its fp32 master copy.
struct Param {
  std::string name;
  ValueId value = kNoValue, grad = kNoValue;
  std::vector<std::int64_t> shape;
  bool decay = true;
  std::vector<float> data;  // the fp32 master

  TensorView view(std::vector<float>& buf) const {
    return TensorView(buf.data(), DType::f32, shape.data(), static_cast<int>(shape.size()));
  }
};

// N(0, 1) from the generator (Box-Muller on 53-bit uniforms): the same bits on every platform
// with the same libm.
double standard_normal(std::mt19937_64& rng) {
  const double u1 = (static_cast<double>(rng() >> 11) + 1.0) * 0x1p-53;  // (0, 1]
  const double u2 = static_cast<double>(rng() >> 11) * 0x1p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

// One AdamW or SGD update of `param` (f32) from `grad`; m, v: the moments of param's shape (v:
// AdamW only; m: null for SGD without momentum).
void update_parameter(const OptimizerConfig& o, const TensorView& param, const TensorView& grad, float* m, float* v,
                      bool decay, float grad_scale, std::int64_t step) {
  const float wd = decay ? o.weight_decay : 0.0f;
  if (o.kind == OptimizerKind::adamw) {
    AdamWArgs a;
    a.param = param;
    a.grad = grad;
    a.m = TensorView(m, DType::f32, param.shape.data(), param.rank);
    a.v = TensorView(v, DType::f32, param.shape.data(), param.rank);
    a.lr = o.lr;
    a.beta1 = o.beta1;
    a.beta2 = o.beta2;
    a.eps = o.eps;
    a.weight_decay = wd;
    a.grad_scale = grad_scale;
    a.step = step;
    adamw_step(a);
  } else {
    SgdArgs a;
    a.param = param;
    a.grad = grad;
    if (m != nullptr) a.momentum_buffer = TensorView(m, DType::f32, param.shape.data(), param.rank);
    a.lr = o.lr;
    a.momentum = o.momentum;
    a.weight_decay = wd;
    a.grad_scale = grad_scale;
    sgd_step(a);
  }
}

// Device memory from a backend, given back to it.
struct BackendFree {
  const ops::Backend* backend = nullptr;
  void operator()(void* p) const noexcept { backend->deallocate(p); }
};
using DeviceBuffer = std::unique_ptr<void, BackendFree>;

// The model's shape as the trainer sees it: which model, its vocabulary and sequence length, and
// the rows of one micro-batch.
struct ModelShape {
  std::optional<GptConfig> gpt;
  std::optional<MlpConfig> mlp;
  std::int64_t vocab = 0, seq = 0, batch = 0;
};

// The compiled step: the training graph's executor and the values the trainer feeds and reads.
struct CompiledStep {
  std::unique_ptr<Executor> exec;
  ValueId tokens = kNoValue, targets = kNoValue, positions = kNoValue, logits = kNoValue, loss = kNoValue;
  ValueId loss_seed = kNoValue;
  std::string dump;                         // graph::dump of the compiled graph
  std::vector<NodeFp16Totals> fp16_totals;  // the fp16 GEMM nodes, summed over step()'s runs

  int yield() const { return exec->graph().yield_index(); }

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
};

// The host buffers of one micro-batch (tokens, targets, positions).
struct BatchBuffers {
  std::vector<std::int32_t> tokens, targets, positions;

  // ids must hold `rows` full sequences of ids in [0, vocab).
  static void check_ids(const char* fn, const char* what, std::span<const std::int32_t> ids, std::int64_t rows,
                        const ModelShape& shape) {
    const auto want = static_cast<std::size_t>(rows * shape.seq);
    if (ids.size() != want)
      fail(fn, what, " must hold ", rows, " x ", shape.seq, " = ", want, " ids, but got ", ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (ids[i] < 0 || ids[i] >= shape.vocab)
        fail(fn, what, "[", i, "] = ", ids[i], " is out of range [0, ", shape.vocab, ")");
  }

  // Copies micro-batch `micro` of `t` and `y` into the buffers.
  void load(std::span<const std::int32_t> t, std::span<const std::int32_t> y, std::int64_t micro) {
    const std::size_t n = tokens.size();
    std::memcpy(tokens.data(), t.data() + static_cast<std::size_t>(micro) * n, n * sizeof(std::int32_t));
    std::memcpy(targets.data(), y.data() + static_cast<std::size_t>(micro) * n, n * sizeof(std::int32_t));
  }
};

// The optimizer's state per parameter (AdamW m and v, or SGD's momentum; empty when unused) and
// the gradient accumulators of micro-batching, in host memory (on a GPU: the mirrors of the
// device copies, see DeviceStaging), and the multi-tensor step that updates them. The count of
// updating steps (AdamW's bias correction) and the loss-scale state live in the step's
// StepScalars, in the memory of the device; `known` is their copy as last read.
struct OptimizerState {
  std::vector<std::vector<float>> m, v, acc;  // m, v: empty under ZeRO-1 until tensors() stages them
  int moments = 0;                            // 2 (AdamW: m, v), 1 (SGD with momentum: m) or 0
  bool sharded = false;                       // ZeRO-1: the step's moments are the averaging's shard
  std::unique_ptr<MultiTensorStep> step;
  StepScalars known;
};

// fp16 dynamic loss scaling (on only when the compute is f16). The running state (scale, good
// and skipped steps) is in the step's StepScalars; the scaler checks the config and a restored
// state and gives the step its rule.
struct LossScaling {
  LossScaler scaler;
  bool enabled = false;
};

// Where the trainer's state lives on a GPU (config.device == cuda), through the device's backend
// object: the device copies of the ids, the fp32 masters, the optimizer state and the
// accumulators. The step keeps them there; the host vectors of Param and OptimizerState are
// mirrors: tensors() downloads them when the device has newer values, and since a caller may
// write through the pointers it returns, the next run uploads them again (checkpoint save and
// restore, set_tensor: never in the steady state). Per run only the ids go up. Off a GPU it
// holds nothing and the host vectors are the state.
struct DeviceStaging {
  const ops::Backend* backend = nullptr;  // null: the host buffers are bound directly
  int device_index = 0;
  DeviceBuffer tokens, targets, positions;
  std::vector<DeviceBuffer> params, m, v, acc;  // m, v, acc: null where the host vector is empty
  bool host_valid = true;                       // the host mirrors hold the newest values
  bool device_valid = false;                    // the device copies hold the newest values

  bool on_device() const { return backend != nullptr; }
  DeviceBuffer allocate(std::size_t bytes) const {
    return DeviceBuffer(backend->allocate(bytes, device_index), BackendFree{backend});
  }

  // Before a run: the ids to the device.
  void upload_ids(const BatchBuffers& b) const {
    const std::size_t id_bytes = b.tokens.size() * sizeof(std::int32_t);
    backend->copy_to_device(tokens.get(), b.tokens.data(), id_bytes, device_index);
    backend->copy_to_device(targets.get(), b.targets.data(), id_bytes, device_index);
  }

  // f(device buffer, host mirror) for every master and optimizer state tensor.
  template <class F>
  void for_each_state(std::vector<Param>& ps, OptimizerState& o, F&& f) {
    for (std::size_t i = 0; i < ps.size(); ++i) {
      f(params[i], ps[i].data);
      if (!o.m[i].empty()) f(m[i], o.m[i]);
      if (!o.v[i].empty()) f(v[i], o.v[i]);
    }
  }
  void upload_state(std::vector<Param>& ps, OptimizerState& o) {
    for_each_state(ps, o, [&](DeviceBuffer& d, std::vector<float>& h) {
      if (!h.empty()) backend->copy_to_device(d.get(), h.data(), h.size() * sizeof(float), device_index);
    });
    device_valid = true;
  }
  void download_state(std::vector<Param>& ps, OptimizerState& o) {
    for_each_state(ps, o, [&](DeviceBuffer& d, std::vector<float>& h) {
      if (!h.empty()) backend->copy_to_host(h.data(), d.get(), h.size() * sizeof(float), device_index);
    });
    host_valid = true;
  }

  void to_host(void* dst, const void* src, std::size_t bytes) const {
    backend->copy_to_host(dst, src, bytes, device_index);
  }
};

}  // namespace

struct Trainer::State {
  TrainerConfig config;
  ModelShape shape;
  CompiledStep compiled;
  std::vector<Param> params;
  std::vector<TensorView> grads;  // the executor's gradients (on a GPU: device memory)
  std::vector<TensorView> accs;   // cpu, micro-batches: views of the accumulators
  OptimizerState optimizer;
  LossScaling scaling;
  BatchBuffers batch;
  DeviceStaging staging;
  GradientAveraging averaging;
  std::vector<float*> param_data;  // each parameter's fp32 master (ZeRO-1's all_gather)

  // ZeRO-1: the full-size moments tensors() shows (a staging copy, allocated on first use,
  // filled by gather_state() and freed by the next step, so that between checkpoints a rank
  // holds its 1/N), and their pointer lists for the averaging.
  std::vector<std::vector<float>*> staged_moments() {
    if (optimizer.sharded && optimizer.moments > 0 && optimizer.m.front().empty())
      for (std::size_t i = 0; i < params.size(); ++i) {
        optimizer.m[i].assign(params[i].data.size(), 0.0f);
        if (optimizer.moments > 1) optimizer.v[i].assign(params[i].data.size(), 0.0f);
      }
    std::vector<std::vector<float>*> out{optimizer.m.data(), optimizer.v.data()};
    out.resize(static_cast<std::size_t>(optimizer.moments));
    return out;
  }
  void release_staged_moments() {
    if (!optimizer.sharded) return;
    for (std::size_t i = 0; i < params.size(); ++i) {
      std::vector<float>().swap(optimizer.m[i]);
      std::vector<float>().swap(optimizer.v[i]);
    }
  }
  // The name of moment k (0: m or momentum, 1: v) of parameter i in tensors() and checkpoints.
  std::string moment_name(std::size_t i, int k) const {
    if (config.optimizer.kind != OptimizerKind::adamw) return params[i].name + ":momentum";
    return params[i].name + (k == 0 ? ":adam_m" : ":adam_v");
  }

  State(const TrainerConfig& c, ModelShape s) : config(c), shape(std::move(s)), scaling{LossScaler(c.loss_scale)} {}

  void build(ModelGraph m) {
    const GradientMap gm = build_backward(m.graph, m.loss);
    run_passes(m.graph, {.fuse = config.fuse});
    compiled.dump = graph::dump(m.graph);
    if (config.device == Device::cuda) {
      staging.backend = &ops::backend(config.device);
      staging.device_index = config.device_index;
    }
    compiled.exec = std::make_unique<Executor>(std::move(m.graph), ExecutorOptions{config.device, config.device_index});
    compiled.tokens = m.tokens;
    compiled.targets = m.targets;
    compiled.positions = m.positions;
    compiled.logits = m.logits;
    compiled.loss = m.loss;
    compiled.loss_seed = gm.loss_seed;
    bind_batch();
    scaling.enabled = config.compute == DType::f16;
    init_parameters(m.parameters, gm);
    bind_parameters();
    std::vector<GradientSource> sources;
    for (std::size_t i = 0; i < params.size(); ++i)
      sources.push_back({grads[i], compiled.exec->graph().producer(params[i].grad)});
    averaging.bind(config.communicator, sources, config.bucket_bytes, !staging.on_device(),
                   static_cast<int>(compiled.exec->graph().nodes.size()), optimizer.sharded, optimizer.moments);
    for (Param& p : params) param_data.push_back(p.data.data());
    build_step();
  }

  // The multi-tensor step over every parameter: it reads the executor's gradients, or their
  // accumulators (micro-batches), or the ranks' sums (data parallel), and owns the loss seed.
  void build_step() {
    const Device device = config.device;
    const std::int64_t micro = config.micro_batches;
    std::vector<MultiTensorParam> rows;
    for (std::size_t i = 0; i < params.size(); ++i) {
      Param& p = params[i];
      auto view = [&](std::vector<float>& host, const DeviceBuffer* dev) {
        if (host.empty() && p.data.size() != 0) return TensorView();
        TensorView t = p.view(host);
        if (staging.on_device()) {
          t.data = dev->get();
          t.device = device;
          t.device_index = config.device_index;
        }
        return t;
      };
      MultiTensorParam q;
      q.param = view(p.data, staging.on_device() ? &staging.params[i] : nullptr);
      q.m = view(optimizer.m[i], staging.on_device() ? &staging.m[i] : nullptr);
      q.v = view(optimizer.v[i], staging.on_device() ? &staging.v[i] : nullptr);
      if (micro > 1) {
        q.source = grads[i];
        q.acc = view(optimizer.acc[i], staging.on_device() ? &staging.acc[i] : nullptr);
      }
      q.grad = averaging.active() ? averaging.views()[i] : micro > 1 ? q.acc : grads[i];
      q.decay = p.decay;
      rows.push_back(q);
    }
    StepRule rule = scaling.scaler.rule();  // the loss scaler's growth, backoff, floor and interval
    rule.clip_norm = config.clip_norm;
    rule.divisor = static_cast<double>(micro) * averaging.ranks();
    rule.loss_scaling = scaling.enabled;
    optimizer.step =
        std::make_unique<MultiTensorStep>(rows, rule, device, config.device_index, config.loss_scale.initial_scale);
    optimizer.known = optimizer.step->read();
    compiled.exec->bind(compiled.loss_seed, &optimizer.step->scalars()->seed);
  }

  // Sizes the batch buffers and binds them (or, on a GPU, their device copies) to the executor.
  void bind_batch() {
    Executor& exec = *compiled.exec;
    const std::size_t rows = static_cast<std::size_t>(shape.batch * shape.seq);
    batch.tokens.assign(rows, 0);
    batch.targets.assign(rows, 0);
    const bool positions = compiled.positions != kNoValue;
    if (positions) {
      batch.positions.resize(rows);
      for (std::size_t i = 0; i < rows; ++i)
        batch.positions[i] = static_cast<std::int32_t>(static_cast<std::int64_t>(i) % shape.seq);
    }
    if (staging.on_device()) {
      const std::size_t bytes = rows * sizeof(std::int32_t);
      staging.tokens = staging.allocate(bytes);
      staging.targets = staging.allocate(bytes);
      exec.bind(compiled.tokens, staging.tokens.get());
      exec.bind(compiled.targets, staging.targets.get());
      if (positions) {
        staging.positions = staging.allocate(bytes);
        staging.backend->copy_to_device(staging.positions.get(), batch.positions.data(), bytes, staging.device_index);
        exec.bind(compiled.positions, staging.positions.get());
      }
    } else {
      exec.bind(compiled.tokens, batch.tokens.data());
      exec.bind(compiled.targets, batch.targets.data());
      if (positions) exec.bind(compiled.positions, batch.positions.data());
    }
  }

  // The fp32 masters, initialized from config.seed (N(0, std) weights, ones, zeros), and the
  // optimizer state and accumulators beside them.
  void init_parameters(const std::vector<ParameterInit>& inits, const GradientMap& gm) {
    std::mt19937_64 rng(config.seed);
    for (const ParameterInit& init : inits) {
      const Value& v = compiled.exec->graph().value(init.value);
      Param p;
      p.name = v.name;
      p.value = init.value;
      p.grad = gm.of(init.value);
      if (p.grad == kNoValue)
        fail("train::Trainer", "parameter ", p.name, " has no gradient (the loss does not depend on it)");
      p.shape = v.shape;
      p.decay = init.decay;
      const auto n = static_cast<std::size_t>(v.numel());
      p.data.resize(n);
      for (float& x : p.data)
        x = init.kind == InitKind::ones    ? 1.0f
            : init.kind == InitKind::zeros ? 0.0f
                                           : static_cast<float>(init.std * standard_normal(rng));
      const bool adamw = config.optimizer.kind == OptimizerKind::adamw;
      optimizer.moments = adamw ? 2 : config.optimizer.momentum != 0.0f ? 1 : 0;
      optimizer.sharded = config.zero == 1 && config.communicator != nullptr && config.communicator->size() > 1;
      const std::size_t held = optimizer.sharded ? 0 : n;
      optimizer.m.emplace_back(optimizer.moments > 0 ? held : 0, 0.0f);
      optimizer.v.emplace_back(optimizer.moments > 1 ? held : 0, 0.0f);
      optimizer.acc.emplace_back(config.micro_batches > 1 ? n : 0, 0.0f);
      params.push_back(std::move(p));
    }
  }

  // Binds each parameter (or its device copy) and its gradient view.
  void bind_parameters() {
    Executor& exec = *compiled.exec;
    for (std::size_t i = 0; i < params.size(); ++i) {
      Param& p = params[i];
      if (staging.on_device()) {
        auto device_copy = [&](const std::vector<float>& host) {
          return host.empty() ? DeviceBuffer(nullptr, BackendFree{staging.backend})
                              : staging.allocate(host.size() * sizeof(float));
        };
        staging.params.push_back(device_copy(p.data));
        staging.m.push_back(device_copy(optimizer.m[i]));
        staging.v.push_back(device_copy(optimizer.v[i]));
        staging.acc.push_back(device_copy(optimizer.acc[i]));
        exec.bind(p.value, staging.params.back().get());
      } else {
        exec.bind(p.value, p.data.data());
      }
      grads.push_back(exec.view(p.grad));
      if (!staging.on_device() && !optimizer.acc[i].empty()) accs.push_back(p.view(optimizer.acc[i]));
    }
  }

  // Runs nodes [begin, end): on a GPU, uploads the ids first (and the state when the host
  // mirrors were handed out since).
  void run(int begin, int end) {
    if (staging.on_device()) {
      if (!staging.device_valid) staging.upload_state(params, optimizer);
      staging.upload_ids(batch);
    }
    compiled.exec->run(begin, end);
  }

  // The host mirrors, current (a GPU's state downloaded when the device has newer values); the
  // caller may write them, so a GPU uploads them before its next run.
  void host_state() {
    if (!staging.on_device()) return;
    if (!staging.host_valid) staging.download_state(params, optimizer);
    staging.device_valid = false;
  }

  // The step's scalars, edited (step count, loss-scale state) and written back.
  template <class F>
  void edit_scalars(F&& f) {
    StepScalars k = optimizer.step->read();
    f(k);
    optimizer.step->write(k);
    optimizer.known = k;
  }

  double loss() const {
    float value = 0.0f;
    const void* src = compiled.exec->view(compiled.loss).data;
    if (staging.on_device())
      staging.to_host(&value, src, sizeof(float));
    else
      value = *static_cast<const float*>(src);
    return value;
  }

  // The trainer of one model kind: the checks, the state, the graph `build_graph` makes.
  template <typename BuildGraph>
  static Trainer make(const TrainerConfig& config, ModelShape shape, BuildGraph&& build_graph) {
    check_config(config);
    shape.batch = config.batch;
    auto s = std::make_unique<State>(config, std::move(shape));
    s->build(build_graph());
    return Trainer(std::move(s));
  }
};

Trainer::Trainer(std::unique_ptr<State> state) : state_(std::move(state)) {}
Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;
Trainer::~Trainer() = default;

Trainer Trainer::from_graph(ModelGraph model, const TrainerConfig& config) {
  check_model_graph(model, config.batch);
  const Graph& g = model.graph;
  const std::int64_t seq = g.value(model.tokens).shape[1], vocab = g.value(model.logits).shape[2];
  std::vector<ValueId>& outputs = model.graph.outputs;  // the loss is read after each run
  if (std::find(outputs.begin(), outputs.end(), model.loss) == outputs.end()) outputs.push_back(model.loss);
  return State::make(config, ModelShape{std::nullopt, std::nullopt, vocab, seq, 0}, [&] { return std::move(model); });
}

Trainer Trainer::gpt(const GptConfig& model, const TrainerConfig& config) {
  return State::make(config, ModelShape{model, std::nullopt, model.vocab, model.seq_len, 0},
                     [&] { return build_gpt(model, config.batch, config.compute); });
}

Trainer Trainer::mlp(const MlpConfig& model, const TrainerConfig& config) {
  return State::make(config, ModelShape{std::nullopt, model, model.vocab, model.seq_len, 0},
                     [&] { return build_token_mlp(model, config.batch, config.compute); });
}

StepResult Trainer::step(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets) {
  State& s = *state_;
  const char* fn = "train::Trainer::step";
  const std::int64_t micro = s.config.micro_batches;
  BatchBuffers::check_ids(fn, "tokens", tokens, micro * s.shape.batch, s.shape);
  BatchBuffers::check_ids(fn, "targets", targets, micro * s.shape.batch, s.shape);
  StepResult r;
  s.release_staged_moments();
  MultiTensorStep& step = *s.optimizer.step;
  const float* loss_value = static_cast<const float*>(s.compiled.exec->view(s.compiled.loss).data);
  const int nodes = static_cast<int>(s.compiled.exec->graph().nodes.size());
  for (std::int64_t k = 0; k < micro; ++k) {
    s.batch.load(tokens, targets, k);
    // Over N ranks, the last micro-batch's backward runs in node ranges, each followed by the
    // launch of the buckets whose gradients are complete (and accumulated, with micro-batches).
    const bool buckets = s.averaging.active() && k + 1 == micro;
    if (buckets) {
      int at = 0;
      for (const GradientAveraging::Launch& l : s.averaging.launches()) {
        s.run(at, l.end);
        at = l.end;
        // The earlier micro-batches' loss sum is in the step's scalars (host memory: cpu only).
        const double earlier = k == 0 ? 0.0 : step.scalars()->loss_sum;
        const double loss = (earlier + s.loss()) / static_cast<double>(micro);
        for (int b = l.first; b < l.last; ++b)
          s.averaging.launch(b, s.grads,
                             micro > 1 ? std::span<const TensorView>(s.accs) : std::span<const TensorView>(), loss);
      }
      if (at < nodes) s.run(at, nodes);
    } else {
      s.run(0, nodes);
    }
    s.compiled.add_fp16_records();
    // The gradient accumulators and the loss sum (the last micro-batch of a data-parallel step
    // accumulates into the buckets as they are launched).
    if (!buckets) step.accumulate(k == 0, loss_value);
  }
  // Over N ranks (cpu only): the sums of every rank's gradients, equal on every rank, so the
  // finiteness check, the skip decision, the loss scaler and the norm agree without another
  // collective. The step reads the sums (its grads are averaging's views).
  if (s.averaging.active()) r.loss = s.averaging.finish();
  const OptimizerConfig& o = s.config.optimizer;
  if (s.averaging.zero()) {
    // ZeRO-1 (cpu): the decision from the shards' norms combined in rank order (data_parallel.hpp;
    // a non-finite element makes its shard's norm, so the norm, non-finite on every rank), then
    // this rank's slices of the parameters with its shard's moments, then all_gather.
    const double raw_norm = s.averaging.grad_norm();
    step.decide(raw_norm, std::isfinite(raw_norm));
    const StepScalars& k = *step.scalars();  // host memory on the cpu
    if (k.skip == 0) {
      for (const GradientAveraging::Slice& sl : s.averaging.shard()) {
        const auto count = static_cast<std::int64_t>(sl.count);
        const auto slice = [&](float* d) { return TensorView(d, DType::f32, &count, 1); };
        Param& p = s.params[static_cast<std::size_t>(sl.param)];
        const float* g =
            static_cast<const float*>(s.averaging.views()[static_cast<std::size_t>(sl.param)].data) + sl.offset;
        float* m = s.optimizer.moments > 0 ? s.averaging.moment(0) + sl.state : nullptr;
        float* v = s.optimizer.moments > 1 ? s.averaging.moment(1) + sl.state : nullptr;
        update_parameter(o, slice(p.data.data() + sl.offset), slice(const_cast<float*>(g)), m, v, p.decay, k.grad_scale,
                         k.steps);
      }
      s.averaging.gather_parameters(s.param_data);
    }
    s.optimizer.known = k;
  } else {
    step.decide();  // norm, finiteness, loss scale, clip coefficient, skip, step count
    if (o.kind == OptimizerKind::adamw)
      step.adamw({o.lr, o.beta1, o.beta2, o.eps, o.weight_decay, s.optimizer.known.steps + 1});
    else
      step.sgd({o.lr, o.momentum, o.weight_decay});
    if (s.staging.on_device()) s.staging.host_valid = false;
    s.optimizer.known = step.read();  // waits for the step (80 bytes)
  }
  const StepScalars& k = s.optimizer.known;
  if (k.window_miss != 0) fail_with(ErrorKind::internal, fn, "the step count left the AdamW window");
  if (!s.averaging.active()) r.loss = k.loss_sum / static_cast<double>(micro);
  r.grad_norm = k.grad_norm;
  r.skipped = k.skip != 0;
  r.loss_scale = k.used_seed;
  return r;
}

double Trainer::evaluate(std::span<const std::int32_t> tokens, std::span<const std::int32_t> targets) {
  State& s = *state_;
  BatchBuffers::check_ids("train::Trainer::evaluate", "tokens", tokens, s.shape.batch, s.shape);
  BatchBuffers::check_ids("train::Trainer::evaluate", "targets", targets, s.shape.batch, s.shape);
  s.batch.load(tokens, targets, 0);
  s.run(0, s.compiled.yield());
  return s.loss();
}

void Trainer::logits(std::span<const std::int32_t> tokens, std::span<float> out) {
  State& s = *state_;
  const char* fn = "train::Trainer::logits";
  BatchBuffers::check_ids(fn, "tokens", tokens, s.shape.batch, s.shape);
  const auto want = static_cast<std::size_t>(s.shape.batch * s.shape.seq * s.shape.vocab);
  if (out.size() != want) fail(fn, "out must hold batch x seq_len x vocab = ", want, " floats, but got ", out.size());
  std::memcpy(s.batch.tokens.data(), tokens.data(), tokens.size() * sizeof(std::int32_t));
  s.run(0, s.compiled.yield());
  TensorView src = s.compiled.exec->view(s.compiled.logits);
  std::vector<unsigned char> host;  // on a GPU: the logits in their dtype, copied back
  if (s.staging.on_device()) {
    host.resize(static_cast<std::size_t>(src.numel()) * dtype_size(src.dtype));
    s.staging.to_host(host.data(), src.data, host.size());
    src = TensorView(host.data(), src.dtype, src.shape.data(), src.rank);
  }
  convert(src, TensorView(out.data(), DType::f32, src.shape.data(), src.rank));
}

std::vector<NamedTensor> Trainer::tensors() {
  State& s = *state_;
  s.host_state();
  s.staged_moments();
  std::vector<NamedTensor> out;
  for (Param& p : s.params) out.push_back({p.name, DType::f32, p.shape, p.data.data()});
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    if (s.optimizer.m[i].empty()) continue;
    out.push_back({s.moment_name(i, 0), DType::f32, s.params[i].shape, s.optimizer.m[i].data()});
    if (s.optimizer.moments > 1)
      out.push_back({s.moment_name(i, 1), DType::f32, s.params[i].shape, s.optimizer.v[i].data()});
  }
  return out;
}

std::vector<std::string> Trainer::parameter_names() const {
  std::vector<std::string> out;
  for (const Param& p : state_->params) out.push_back(p.name);
  return out;
}

void Trainer::set_tensor(const std::string& name, std::span<const float> values) {
  State& s = *state_;
  const char* fn = "train::Trainer::set_tensor";
  const auto copy_into = [&](float* to, std::size_t numel) {
    if (values.size() != numel) fail(fn, "'", name, "' has ", numel, " elements, but got ", values.size());
    if (to != nullptr) std::memcpy(to, values.data(), numel * sizeof(float));
  };
  s.host_state();
  for (std::size_t i = 0; i < s.params.size(); ++i) {
    std::vector<float>& p = s.params[i].data;
    if (s.params[i].name == name) return copy_into(p.data(), p.size());
    for (int k = 0; k < s.optimizer.moments; ++k) {
      if (s.moment_name(i, k) != name) continue;
      std::vector<float>& full = k == 0 ? s.optimizer.m[i] : s.optimizer.v[i];
      if (!s.optimizer.sharded) return copy_into(full.data(), full.size());
      // ZeRO-1: this rank's slices of the tensor (and the staging copy, if one is held).
      copy_into(full.empty() ? nullptr : full.data(), p.size());
      s.averaging.load_moment(k, static_cast<int>(i), values.data());
      return;
    }
  }
  fail(fn, "no tensor is named '", name, "'");
}

std::int64_t Trainer::step_count() const { return state_->optimizer.known.steps; }
void Trainer::set_learning_rate(float lr) {
  if (!std::isfinite(lr) || lr < 0.0f)
    fail("train::Trainer::set_learning_rate", "lr must be finite and >= 0, but got ", lr);
  state_->config.optimizer.lr = lr;
}

void Trainer::set_step_count(std::int64_t steps) {
  if (steps < 0) fail("train::Trainer::set_step_count", "steps must be >= 0, but got ", steps);
  state_->edit_scalars([&](StepScalars& k) { k.steps = steps; });
}

LossScaleState Trainer::loss_scale() const {
  const StepScalars& k = state_->optimizer.known;
  return {k.loss_scale, k.good_steps, k.skipped_steps};
}

void Trainer::set_loss_scale(const LossScaleState& state) {
  State& s = *state_;
  s.scaling.scaler.set_state(state);  // the checks
  s.edit_scalars([&](StepScalars& k) {
    k.loss_scale = state.scale;
    k.good_steps = state.good_steps;
    k.skipped_steps = state.skipped_steps;
    if (s.scaling.enabled) k.seed = state.scale;
  });
}

const GptConfig* Trainer::gpt_config() const { return state_->shape.gpt ? &*state_->shape.gpt : nullptr; }
const MlpConfig* Trainer::mlp_config() const { return state_->shape.mlp ? &*state_->shape.mlp : nullptr; }
const TrainerConfig& Trainer::config() const { return state_->config; }

std::vector<NodeTiming> Trainer::node_timings() const {
  std::vector<NodeTiming> out;
  const Graph& g = state_->compiled.exec->graph();
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    out.push_back({std::string(op_name(g.nodes[i].op)), g.nodes[i].name, g.nodes[i].attrs.backward,
                   state_->compiled.exec->records()[i].seconds});
  return out;
}

std::vector<NodeFp16Totals> Trainer::fp16_node_totals() const { return state_->compiled.fp16_totals; }

std::string Trainer::graph_dump() const { return state_->compiled.dump; }

CommunicationStats Trainer::communication() const {
  CommunicationStats c = state_->averaging.times();
  std::size_t bytes = state_->averaging.moment_bytes();
  if (!state_->optimizer.sharded)
    for (std::size_t i = 0; i < state_->params.size(); ++i)
      bytes += (state_->optimizer.m[i].size() + state_->optimizer.v[i].size()) * sizeof(float);
  c.optimizer_state_bytes = bytes;
  return c;
}

void Trainer::gather_state() {
  State& s = *state_;
  if (!s.optimizer.sharded) return;
  const std::vector<std::vector<float>*> full = s.staged_moments();
  s.averaging.gather_moments(full);
}

std::int64_t Trainer::parameter_count() const {
  std::int64_t n = 0;
  for (const Param& p : state_->params) n += static_cast<std::int64_t>(p.data.size());
  return n;
}

}  // namespace ampkit::train
