// The graph executor (graph layer): owns the verified graph, its memory plan and the arena
// (allocated once), binds external values, binds each node once (its operand views, built by its
// op definition, src/graph/ops/, and at its first run its prepared op calls: validated, kernel
// entry selected), then at each run only runs the prepared nodes in order, with a
// BackwardPassGuard around tagged ones, recording per-node time and fp16 mode. Called by the
// trainer, tests and users.
#include "ampkit/graph/executor.hpp"

#include <chrono>
#include <new>
#include <string>
#include <utility>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/verify.hpp"
#include "ampkit/numerics/fp16_policy.hpp"
#include "graph/ops/op_def.hpp"
#include "ops/backend.hpp"

namespace ampkit::graph {

void Executor::ArenaDeleter::operator()(std::byte* p) const {
  ops::backend(device ? Device::cuda : Device::cpu).deallocate(p);
}

Executor::Executor(Graph g, ExecutorOptions options) : graph_(std::move(g)), options_(options) {
  verify(graph_);
  plan_ = plan_memory(graph_);
  if (options_.device != Device::cpu && options_.device != Device::cuda)
    fail("graph::Executor", "device must be cpu or cuda, but got the value ", static_cast<int>(options_.device));
  const ops::Backend& backend = ops::backend(options_.device);
  if (const char* why = backend.unavailable())
    fail_with(ErrorKind::unsupported, "graph::Executor", "device is ", backend.name(), ", but ", why);
  const bool on_gpu = options_.device == Device::cuda;
  if (on_gpu && (options_.device_index < 0 || options_.device_index >= backend.usable_devices()))
    fail("graph::Executor", "device is cuda:", options_.device_index, ", but this machine has ",
         backend.usable_devices(), " CUDA device(s)");
  // The backend's alignment (cuda: cudaMalloc's 256 bytes, cpu: 64) is a multiple of
  // kArenaAlignment. The arena is allocated once, here.
  static_assert(kArenaAlignment == 64);
  try {
    arena_ = std::unique_ptr<std::byte[], ArenaDeleter>(
        static_cast<std::byte*>(backend.allocate(static_cast<std::size_t>(plan_.arena_bytes), options_.device_index)),
        ArenaDeleter{on_gpu});
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::out_of_memory || on_gpu) throw;
    fail_with(ErrorKind::out_of_memory, "graph::Executor", "cannot allocate the arena of ", plan_.arena_bytes,
              " bytes");
  }
  const std::size_t nv = graph_.values.size();
  data_.assign(nv, nullptr);
  external_.assign(nv, false);
  for (std::size_t v = 0; v < nv; ++v) {
    if (plan_.offset[v] >= 0)
      data_[v] = arena_.get() + plan_.offset[v];
    else if (plan_.first[v] < 0)
      external_[v] = true;
  }
  records_.assign(graph_.nodes.size(), NodeRecord{});
}

Executor::~Executor() = default;
Executor::Executor(Executor&&) noexcept = default;
Executor& Executor::operator=(Executor&&) noexcept = default;

void Executor::bind(ValueId v, const void* data) {
  const Value& val = graph_.value(v);
  if (!external_[static_cast<std::size_t>(v)])
    fail("graph::Executor::bind", "value %", v, " '", val.name,
         "' is produced by a node or unused; only inputs, parameters and gradient seeds are bound");
  if (data == nullptr && val.numel() > 0)
    fail("graph::Executor::bind", "value %", v, " '", val.name, "' needs memory, but got null");
  data_[static_cast<std::size_t>(v)] = const_cast<void*>(data);
  bound_stale_ = true;
}

void Executor::run() { run(0, static_cast<int>(graph_.nodes.size())); }

void Executor::run(int begin, int end) {
  const int n = static_cast<int>(graph_.nodes.size());
  if (begin < 0 || end > n || begin > end)
    fail("graph::Executor::run", "the node range [", begin, ", ", end, ") is not within [0, ", n, "]");
  if (bound_stale_) bind_nodes();
  for (int i = begin; i < end; ++i) {
    BoundNode& b = bound_[static_cast<std::size_t>(i)];
    if (b.unbound != kNoValue)
      fail("graph::Executor::run", describe_node(graph_, i), " reads %", b.unbound, " '", graph_.value(b.unbound).name,
           "', which is not bound");
    NodeRecord& record = records_[static_cast<std::size_t>(i)];
    record.backward = b.attrs.backward;
    record.fp16_gemm = false;
    record.gemm_calls = 0;
    record.fp16_subnormal_inputs = record.fp16_subnormal_outputs = 0;
    const auto start = std::chrono::steady_clock::now();
    try {
      BackwardPassGuard guard(b.attrs.backward);
      if (!b.plan && b.def->prepare != nullptr) b.def->prepare(b);  // once per bind
      b.def->run(b, record);
    } catch (const Error& e) {
      throw Error(detail::concat("graph: ", describe_node(graph_, i), ": ", e.what()), e.kind());
    }
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
}

// Once per graph and after each bind(): every node's operand views (its op's bind). Its op's
// prepare (validation, kernel selection) follows at the node's first run, so a bad operand fails
// where and as it always did; later runs only run the prepared calls. A node that reads an
// unbound external value keeps it in `unbound` and fails only when it is run.
void Executor::bind_nodes() {
  bound_.clear();
  bound_.resize(graph_.nodes.size());
  for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
    const Node& node = graph_.nodes[i];
    BoundNode& b = bound_[i];
    b.def = &op_def(node.op);
    b.attrs = node.attrs;
    b.device = options_.device;
    b.device_index = options_.device_index;
    for (ValueId v : node.inputs)
      if (v != kNoValue && data_[static_cast<std::size_t>(v)] == nullptr && graph_.value(v).numel() > 0) {
        b.unbound = v;
        break;
      }
    if (b.unbound != kNoValue) continue;
    try {
      b.def->bind(b, NodeOperands(graph_, node, data_, options_));
    } catch (const Error& e) {
      throw Error(detail::concat("graph: ", describe_node(graph_, static_cast<int>(i)), ": ", e.what()), e.kind());
    }
  }
  bound_stale_ = false;
}

TensorView Executor::view(ValueId v) const {
  const Value& val = graph_.value(v);
  void* p = data_[static_cast<std::size_t>(v)];
  if (p == nullptr && val.numel() > 0) return TensorView();
  TensorView out(p, val.dtype, val.shape.data(), static_cast<int>(val.shape.size()), options_.device);
  out.device_index = options_.device_index;
  return out;
}

}  // namespace ampkit::graph
