// Liveness-based memory planning of a graph (graph layer): each node-produced value lives from
// its producer to its last reader (to the end for graph outputs); values are placed largest
// first at the lowest 64-byte-aligned offset that does not overlap, in memory, a placed value
// whose lifetime overlaps (TFLite's greedy-by-size arena strategy). Called by the executor.
#include <algorithm>
#include <numeric>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/executor.hpp"

namespace ampkit::graph {
namespace {

std::int64_t round_up(std::int64_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

}  // namespace

MemoryPlan plan_memory(const Graph& g) {
  const std::size_t nv = g.values.size();
  MemoryPlan p;
  p.offset.assign(nv, -1);
  p.first.assign(nv, -1);
  p.last.assign(nv, -1);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const int index = static_cast<int>(i);
    for (ValueId v : g.nodes[i].outputs)
      if (v != kNoValue) {
        p.first[static_cast<std::size_t>(v)] = index;
        p.last[static_cast<std::size_t>(v)] = std::max(p.last[static_cast<std::size_t>(v)], index);
      }
    for (ValueId v : g.nodes[i].inputs)
      if (v != kNoValue) p.last[static_cast<std::size_t>(v)] = std::max(p.last[static_cast<std::size_t>(v)], index);
  }
  for (ValueId v : g.outputs) p.last[static_cast<std::size_t>(v)] = static_cast<int>(g.nodes.size());

  std::vector<ValueId> order;
  for (std::size_t v = 0; v < nv; ++v)
    if (p.first[v] >= 0) order.push_back(static_cast<ValueId>(v));
  std::stable_sort(order.begin(), order.end(),
                   [&](ValueId a, ValueId b) { return g.value(a).bytes() > g.value(b).bytes(); });

  struct Placed {
    std::int64_t begin, end;
    int first, last;
  };
  std::vector<Placed> placed;
  std::vector<Placed> conflicts;
  for (ValueId v : order) {
    const auto u = static_cast<std::size_t>(v);
    const std::int64_t size = round_up(std::max<std::int64_t>(g.value(v).bytes(), 1));
    p.unshared_bytes += size;
    conflicts.clear();
    for (const Placed& q : placed)
      if (q.first <= p.last[u] && p.first[u] <= q.last) conflicts.push_back(q);
    std::sort(conflicts.begin(), conflicts.end(), [](const Placed& a, const Placed& b) { return a.begin < b.begin; });
    std::int64_t offset = 0;
    for (const Placed& q : conflicts) {
      if (offset + size <= q.begin) break;
      offset = std::max(offset, q.end);
    }
    p.offset[u] = offset;
    placed.push_back({offset, offset + size, p.first[u], p.last[u]});
    p.arena_bytes = std::max(p.arena_bytes, offset + size);
  }
  return p;
}

}  // namespace ampkit::graph
