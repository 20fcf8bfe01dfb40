// One node's signature check (graph layer, internal): named access to the node's slots and
// failure messages that name the node ("graph: node 7 (Linear 'h0.fc1'): ..."). Each op
// definition's check (src/graph/ops/<family>.cpp) is written with it; op_table.cpp runs it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

using Shape = std::vector<std::int64_t>;

/// "[2, 3]".
std::string shape_text(const Shape& s);
/// All dims but the last ([] for a scalar).
Shape lead(const Shape& s);
/// The product of the dims (1 for []).
std::int64_t prod(const Shape& s);
/// s with `last` appended.
Shape with_last(Shape s, std::int64_t last);

class OpCheck {
 public:
  OpCheck(const Graph& g, int index) : g_(g), index_(index), n_(g.nodes[static_cast<std::size_t>(index)]) {}

  template <typename... Args>
  [[noreturn]] void fail(Args&&... parts) const {
    throw Error(detail::concat("graph: ", describe_node(g_, index_), ": ", std::forward<Args>(parts)...));
  }

  /// The value in input / output slot `slot`, or nullptr when absent; fails when `required`.
  const Value* in(int slot, const char* name, bool required) const {
    return get(n_.inputs, slot, name, required, "input");
  }
  const Value* out(int slot, const char* name, bool required) const {
    return get(n_.outputs, slot, name, required, "output");
  }

  // The graph's own rules (the op's are its descriptor check). Each passes on a null (absent)
  // value.
  void dtype(const Value* v, const char* name, DType want) const;
  void shape(const Value* v, const char* name, const Shape& want) const;
  void rank_at_least(const Value* v, const char* name, std::size_t r) const;
  void rank(const Value* v, const char* name, std::size_t r) const;

  const Node& node() const { return n_; }
  const Graph& graph() const { return g_; }
  int index() const { return index_; }

 private:
  const Value* get(const std::vector<ValueId>& slots, int slot, const char* name, bool required,
                   const char* kind) const;

  const Graph& g_;
  int index_;
  const Node& n_;
};

}  // namespace ampkit::graph
