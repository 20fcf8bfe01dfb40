// One node's signature check (graph layer): the slot access and the dtype / shape tests the
// graph's own rules are written with (op_check.hpp); the ops' rules are their descriptor checks.
#include "graph/ops/op_check.hpp"

#include <sstream>

namespace ampkit::graph {

std::string shape_text(const Shape& s) {
  std::ostringstream o;
  o << "[";
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << "]";
  return o.str();
}

Shape lead(const Shape& s) { return s.empty() ? Shape{} : Shape(s.begin(), s.end() - 1); }

std::int64_t prod(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

Shape with_last(Shape s, std::int64_t last) {
  s.push_back(last);
  return s;
}

const Value* OpCheck::get(const std::vector<ValueId>& slots, int slot, const char* name, bool required,
                          const char* kind) const {
  const ValueId id = slots[static_cast<std::size_t>(slot)];
  if (id == kNoValue) {
    if (required) fail("the ", kind, " ", name, " is required but absent");
    return nullptr;
  }
  return &g_.value(id);
}

void OpCheck::dtype(const Value* v, const char* name, DType want) const {
  if (v && v->dtype != want)
    fail(name, " (%", v->id, ") must be ", dtype_name(want), ", but got ", dtype_name(v->dtype));
}

void OpCheck::shape(const Value* v, const char* name, const Shape& want) const {
  if (v && v->shape != want)
    fail(name, " (%", v->id, ") must have shape ", shape_text(want), ", but got ", shape_text(v->shape));
}

void OpCheck::rank_at_least(const Value* v, const char* name, std::size_t r) const {
  if (v && v->shape.size() < r) fail(name, " (%", v->id, ") must have rank >= ", r, ", but got ", shape_text(v->shape));
}

void OpCheck::rank(const Value* v, const char* name, std::size_t r) const {
  if (v && v->shape.size() != r) fail(name, " (%", v->id, ") must have rank ", r, ", but got ", shape_text(v->shape));
}

}  // namespace ampkit::graph
