// The memory planner and the executor of the training graph (graph layer, public). The planner
// gives every node-produced value an offset in one 64-byte-aligned arena, reusing memory between
// values whose lifetimes (producer .. last reader) do not overlap. The executor owns the graph
// and the arena (allocated once, at construction), runs nodes in order through the public ops,
// enters a BackwardPassGuard around tagged nodes, resolves the fp16 GEMM mode of each GEMM node
// on the calling thread and records it, with the node's time and fp16 counters (which it also
// adds to the process-wide counters of ampkit/numerics/fp16_policy.hpp). Used by the trainer
// and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ampkit/core/tensor.hpp"
#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

struct BoundNode;  // a node's operand views, built once (internal: src/graph/ops/bound_node.hpp)

inline constexpr std::int64_t kArenaAlignment = 64;

/// Where each value lives. Values that no node produces (inputs, parameters, gradient seeds) are
/// external: the caller binds their memory. Unused values get nothing.
struct MemoryPlan {
  std::vector<std::int64_t> offset;  // per value: arena byte offset, or -1 (external / unused)
  std::vector<int> first;            // per value: producing node index (-1 external / unused)
  std::vector<int> last;             // per value: last node that reads it (nodes.size() for
                                     // graph outputs), -1 when unused
  std::int64_t arena_bytes = 0;      // the arena's size
  std::int64_t unshared_bytes = 0;   // what the arena would need without reuse
};

/// Plans `g` (which must verify). Two values share bytes only when their [first, last] node
/// ranges are disjoint, so no node ever writes over something it or a later node reads.
MemoryPlan plan_memory(const Graph& g);

/// What one node did in the last run.
struct NodeRecord {
  double seconds = 0.0;
  bool backward = false;                 // ran inside a BackwardPassGuard
  bool fp16_gemm = false;                // a GEMM node (Linear, LinearBackward) with an f16 GEMM operand
  Fp16Mode fp16_mode = Fp16Mode::exact;  // the mode resolved for it (when fp16_gemm)
  int gemm_calls = 0;                    // GEMMs the node ran
  // Summed over the node's GEMMs (when fp16_gemm): f16 subnormal operand elements read, and
  // f16 outputs that rounded to a subnormal. Under the flush mode these were flushed to zero;
  // under exact and alt an MI200 would have flushed them (docs/NUMERICS.md).
  std::int64_t fp16_subnormal_inputs = 0;
  std::int64_t fp16_subnormal_outputs = 0;
};

/// Where the executor runs the graph: the cpu (host memory), or one GPU (docs/CUDA.md,
/// "The training graph on the GPU"): the arena is device memory of that GPU (cuda_malloc, never
/// managed memory), every value bound must be device memory of it, and every view the kernels
/// get carries device = cuda.
struct ExecutorOptions {
  Device device = Device::cpu;
  int device_index = 0;
};

class Executor {
 public:
  /// Verifies `g`, plans its memory and allocates the arena (on options.device). Throws
  /// ampkit::Error naming the node on a graph that does not verify, out_of_memory, or
  /// unsupported when the device cannot run (no CUDA backend, no GPU).
  explicit Executor(Graph g, ExecutorOptions options = {});
  ~Executor();
  Executor(Executor&&) noexcept;
  Executor& operator=(Executor&&) noexcept;

  /// Binds the memory of an external value (input, parameter, gradient seed): `data` holds the
  /// value's numel elements of its dtype, row-major, in the executor's device memory, and must
  /// stay valid while runs use it.
  /// Throws ampkit::Error for a value that a node produces, or a null pointer for a non-empty
  /// value.
  void bind(ValueId v, const void* data);

  /// Runs nodes [begin, end) in order (all by default). The first run after construction or a
  /// bind() builds every node's operand views once; later runs only call the kernels (whose
  /// front ends still choose the kernel at each call, under the ISA cap in force then). The forward part alone is
  /// run(0, graph().yield_index()). Throws ampkit::Error naming the node when an external value
  /// it reads is unbound or a kernel rejects its operands (an id out of range, say).
  /// Allocates nothing once every kernel's scratch has grown (after the first run).
  void run();
  void run(int begin, int end);

  /// A row-major view of value v's memory (arena or bound); absent for unused values. Arena
  /// values are valid until the next run (graph outputs: until the next run that writes them).
  TensorView view(ValueId v) const;

  const Graph& graph() const { return graph_; }
  const ExecutorOptions& options() const { return options_; }
  const MemoryPlan& plan() const { return plan_; }
  /// One record per node, of the last run that reached it.
  const std::vector<NodeRecord>& records() const { return records_; }

 private:
  Graph graph_;
  ExecutorOptions options_;
  MemoryPlan plan_;
  struct ArenaDeleter {
    ArenaDeleter() noexcept : device(false) {}
    explicit ArenaDeleter(bool on_device) noexcept : device(on_device) {}
    bool device;  // cuda_malloc'ed (else operator new[])
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte[], ArenaDeleter> arena_;
  std::vector<void*> data_;     // per value
  std::vector<bool> external_;  // per value: bound by the caller
  std::vector<NodeRecord> records_;
  std::vector<BoundNode> bound_;  // per node; rebuilt on the first run after a bind()
  bool bound_stale_ = true;
  void bind_nodes();
};

}  // namespace ampkit::graph
