// One node's signature check (graph layer): the dtype, shape and attribute tests every op
// definition's check is written with (op_check.hpp).
#include "graph/ops/op_check.hpp"

#include <cmath>
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

void OpCheck::floating(const Value* v, const char* name) const {
  if (v && !is_float_dtype(v->dtype))
    fail(name, " (%", v->id, ") must be f32, bf16 or f16, but got ", dtype_name(v->dtype));
}

void OpCheck::dtype(const Value* v, const char* name, DType want) const {
  if (v && v->dtype != want)
    fail(name, " (%", v->id, ") must be ", dtype_name(want), ", but got ", dtype_name(v->dtype));
}

void OpCheck::dtype_or_f32(const Value* v, const char* name, const Value* like, const char* like_name) const {
  if (v && like && v->dtype != like->dtype && v->dtype != DType::f32)
    fail(name, " (%", v->id, ") must be ", like_name, "'s dtype (", dtype_name(like->dtype), ") or f32, but got ",
         dtype_name(v->dtype));
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

void OpCheck::positive_last(const Value* v, const char* name) const {
  if (v && !v->shape.empty() && v->shape.back() < 1)
    fail(name, " (%", v->id, ") must have a last dim >= 1, but got ", shape_text(v->shape));
}

void OpCheck::eps() const {
  const float eps = n_.attrs.eps;
  if (!(eps >= 0.0f) || !std::isfinite(eps)) fail("eps must be finite and >= 0, but got ", eps);
}

void OpCheck::gelu_variant(bool used) const {
  const auto v = n_.attrs.gelu_variant;
  if (used && v != GeluVariant::tanh && v != GeluVariant::erf)
    fail("gelu_variant must be tanh or erf, but got the value ", static_cast<int>(v));
}

}  // namespace ampkit::graph
