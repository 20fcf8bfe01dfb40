// What an op's gradient rule sees (graph layer, internal): the graph being differentiated, the
// summed gradient of a forward value, fresh gradient values and the emission of backward nodes.
// Implemented by autodiff.cpp; used by each op definition's differentiate (src/graph/ops/).
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "ampkit/graph/ir.hpp"

namespace ampkit::graph {

class GradientContext {
 public:
  GradientContext(Graph& g, std::size_t forward_nodes) : g_(g), forward_nodes_(forward_nodes) {}

  /// The summed gradient of v (emitting Add nodes for several contributions), or kNoValue.
  ValueId grad(ValueId v);
  /// Records grad_value as one contribution to v's gradient.
  void contribute(ValueId v, ValueId grad_value) { contributions_[v].push_back(grad_value); }
  /// A fresh gradient value shaped like v ("d:<v's name><suffix>").
  ValueId new_grad(ValueId v, const std::string& suffix = "");
  /// A gradient output for input v when v needs one (contributed to v), else kNoValue.
  ValueId grad_slot(ValueId v);
  /// Appends a backward node (untagged: tag_backward tags it).
  void emit(OpKind op, const std::string& name, std::vector<ValueId> inputs, std::vector<ValueId> outputs,
            Attributes attrs = {});
  /// True when v needs a gradient (a float value on a path from a parameter or a wrt value).
  bool needs(ValueId v) const { return needs_[static_cast<std::size_t>(v)]; }
  const Value& value(ValueId v) const { return g_.value(v); }
  /// Throws "graph autodiff: node i (...): what".
  [[noreturn]] void fail_node(int index, const char* what) const;

  /// Marks the values that need a gradient (parameters, also_wrt and what the forward derives
  /// from them).
  void mark_needs(std::span<const ValueId> also_wrt);

 private:
  Graph& g_;
  std::size_t forward_nodes_;
  std::vector<bool> needs_;
  std::map<ValueId, std::vector<ValueId>> contributions_;
};

}  // namespace ampkit::graph
