// The GEMM on TensorViews (ops layer): validates a GemmViewArgs call in the views' own terms
// (a, b, c, d, bias, aux, bias_grad; M, N, K), then runs it as the one column-major call that
// computes dᵀ: row-major [r, c] with row stride ld is the memory of the column-major c x r
// matrix with leading dimension ld, so dᵀ = op(b)ᵀ op(a)ᵀ has m = N, n = M, A = b's memory,
// B = a's memory. The bias [N] is then the column-major bias over m, the DGELU/DRELU bias
// gradient the column-major sums over n, and BGRADA / BGRADB trade places (docs/DESIGN.md
// section 4). The validation covers what gemm(GemmArgs) checks, so the views' caller never sees
// a message about the swapped call; gemm() still validates it (cheap) as a last guard.
#include "ampkit/ops/gemm_views.hpp"

#include <cstdint>
#include <iterator>
#include <string>
#include <utility>

#include "ampkit/core/error.hpp"
#include "ops/check_message.hpp"
#include "ops/gemm/gemm_kernels.hpp"
#include "ops/gemm/gemm_view_call.hpp"
#include "ops/operand_checks.hpp"

namespace ampkit {
namespace {

constexpr const char* kFn = "gemm";

// A matrix operand as the column-major call sees it: its memory read as column-major rows x cols
// with leading dimension ld (a row-major view [r, c] is the column-major c x r matrix).
struct Matrix {
  const void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0, cols = 0;  // the view's shape
  std::int64_t ld = 1;              // the row stride (row-major) or column stride (column-major)
  bool column_major = false;        // stored with unit stride down the view's columns
  std::int64_t bytes = 0;           // first to last element
};

std::string strides_text(const TensorView& v) { return detail::concat("[", v.strides[0], ", ", v.strides[1], "]"); }

// Bytes spanned by `outer` runs of `inner` elements `ld` apart; throws when it overflows.
std::int64_t span_bytes(const char* name, std::int64_t outer, std::int64_t inner, std::int64_t ld, DType t) {
  if (outer == 0 || inner == 0) return 0;
  std::int64_t elements = 0, bytes = 0;
  if (__builtin_mul_overflow(outer - 1, ld, &elements) || __builtin_add_overflow(elements, inner, &elements) ||
      __builtin_mul_overflow(elements, static_cast<std::int64_t>(dtype_size(t)), &bytes))
    fail(kFn, name, " spans more than 2^63 bytes");
  return bytes;
}

// A rank-2 view as the column-major call reads it, unchecked: row-major when its last dim is
// contiguous with rows >= the row length apart, otherwise column-major (first dim contiguous).
Matrix layout(const TensorView& v) {
  Matrix m;
  m.data = v.data;
  m.dtype = v.dtype;
  m.rows = v.shape[0];
  m.cols = v.shape[1];
  const std::int64_t s0 = v.strides[0], s1 = v.strides[1];
  if ((m.cols <= 1 || s1 == 1) && (m.rows <= 1 || s0 >= m.cols)) {
    m.ld = m.rows <= 1 ? (m.cols > 1 ? m.cols : 1) : s0;
  } else {
    m.column_major = true;
    m.ld = m.cols <= 1 ? (m.rows > 1 ? m.rows : 1) : s1;
  }
  return m;
}

// A present rank-2 float view, last dim contiguous with rows >= the row length apart (or, with
// `either_layout`, first dim contiguous with columns >= the column length apart).
Matrix matrix(const char* name, const TensorView& v, bool either_layout, const char* what, ops::Stage stage) {
  ops::check_given(kFn, name, v, what);
  if (v.rank != 2) fail(kFn, name, " must be a matrix (rank 2, ", what, "), but got shape ", v.shape_string());
  if (!is_float_dtype(v.dtype)) fail(kFn, name, " dtype must be f32, bf16 or f16, but got ", dtype_name(v.dtype));
  const std::int64_t s0 = v.strides[0], s1 = v.strides[1];
  if (s0 < 0 || s1 < 0) fail(kFn, name, " strides must be >= 0, but got ", strides_text(v));
  Matrix m = layout(v);
  const bool col_major = (m.rows <= 1 || s0 == 1) && (m.cols <= 1 || s1 >= m.rows);
  if (!m.column_major) {
    m.bytes = span_bytes(name, m.rows, m.cols, m.ld, m.dtype);
  } else if (either_layout && col_major) {
    m.bytes = span_bytes(name, m.cols, m.rows, m.ld, m.dtype);
  } else {
    fail(kFn, name,
         either_layout ? " must have one contiguous dim with the other stride >= its length"
                       : " must be row-major: last dim contiguous, rows >= its length apart",
         ", but got strides ", strides_text(v), " for shape ", v.shape_string());
  }
  if (stage == ops::Stage::call && m.bytes > 0 && m.data == nullptr)
    fail(kFn, name, " must point to its elements, but got null data");
  return m;
}

// A present rank-1 contiguous view of `length` elements, d's dtype or f32.
std::int64_t vector(const char* name, const TensorView& v, std::int64_t length, const char* shape, DType d_dtype,
                    const char* what, ops::Stage stage) {
  ops::check_given(kFn, name, v, what);
  ops::check_shape(kFn, name, v, &length, 1, shape);
  ops::check_dtype_or_f32(kFn, name, v, d_dtype, "d's");
  if (length > 1 && v.strides[0] != 1) fail(kFn, name, " must be contiguous, but got stride ", v.strides[0]);
  const std::int64_t bytes = span_bytes(name, 1, length, length, v.dtype);
  if (stage == ops::Stage::call && bytes > 0 && v.data == nullptr)
    fail(kFn, name, " must point to its elements, but got null data");
  return bytes;
}

void check_absent(const char* name, const TensorView& v, Epilogue e) {
  if (v.present)
    fail(kFn, name, " must be absent: epilogue ", epilogue_name(e), " does not use it, but got ", v.describe());
}

void check_device(const char* name, const TensorView& v, const TensorView& d) {
  if (v.present && (v.device != d.device || (v.device == Device::cuda && v.device_index != d.device_index)))
    fail(kFn, name, " must be in the memory of d's device (", d.describe(), "), but got ", v.describe());
}

Op flip(Op op) { return op == Op::N ? Op::T : Op::N; }

// The checked operands of a call, as the column-major call will see them.
struct Operands {
  Matrix a, b, c, d, aux;
  std::int64_t M = 0, N = 0, K = 0;
  std::int64_t bias_bytes = 0, grad_bytes = 0;
  bool aux_out = false;  // aux is written (the *_AUX epilogues), not read
};

// M, N, K from op(a) [M, K] and op(b)'s columns.
void set_sizes(const GemmViewArgs& v, Operands& o) {
  o.M = v.op_a == Op::N ? o.a.rows : o.a.cols;
  o.K = v.op_a == Op::N ? o.a.cols : o.a.rows;
  o.N = v.op_b == Op::N ? o.b.cols : o.b.rows;
}

void check_enums(const GemmViewArgs& v) {
  if (v.op_a != Op::N && v.op_a != Op::T) fail(kFn, "op_a must be N or T, but got ", static_cast<int>(v.op_a));
  if (v.op_b != Op::N && v.op_b != Op::T) fail(kFn, "op_b must be N or T, but got ", static_cast<int>(v.op_b));
  if (static_cast<int>(v.epilogue) > static_cast<int>(Epilogue::BGRADB))
    fail(kFn, "epilogue must be an Epilogue value, but got ", static_cast<int>(v.epilogue));
  if (v.gelu != GeluVariant::tanh && v.gelu != GeluVariant::erf)
    fail(kFn, "gelu must be tanh or erf, but got ", static_cast<int>(v.gelu));
  if (v.fp16_mode != Fp16Mode::exact && v.fp16_mode != Fp16Mode::flush && v.fp16_mode != Fp16Mode::alt)
    fail(kFn, "fp16_mode must be exact, flush or alt, but got ", static_cast<int>(v.fp16_mode));
}

// a, b, c, d: structure, M, N, K, one device.
void check_matrices(const GemmViewArgs& v, Operands& o, ops::Stage stage) {
  o.a = matrix("a", v.a, true, "op(a) is [M, K]", stage);
  o.b = matrix("b", v.b, true, "op(b) is [K, N]", stage);
  o.d = matrix("d", v.d, false, "the output [M, N]", stage);
  set_sizes(v, o);
  const std::int64_t kb = v.op_b == Op::N ? o.b.rows : o.b.cols;
  if (kb != o.K)
    fail(kFn, "op(b) must have K = ", o.K, " rows (op(a)'s columns), but b has shape ", v.b.shape_string(),
         " with op_b ", v.op_b == Op::N ? "N" : "T");
  const std::int64_t md[2] = {o.M, o.N};
  ops::check_shape(kFn, "d", v.d, md, 2, "shape [M, N] =");
  for (const auto& [name, view] : {std::pair{"a", &v.a},
                                   {"b", &v.b},
                                   {"c", &v.c},
                                   {"bias", &v.bias},
                                   {"aux", &v.aux},
                                   {"bias_grad", &v.bias_grad}})
    check_device(name, *view, v.d);
  if (v.beta != 0.0f) {
    o.c = matrix("c", v.c, false, "beta != 0 adds beta c", stage);
    ops::check_shape(kFn, "c", v.c, md, 2, "d's shape");
  } else if (v.c.present) {
    fail(kFn, "c must be absent when beta == 0 (it is not read), but got ", v.c.describe());
  }
}

// bias, aux, bias_grad: given exactly when the epilogue uses them (the column-major decode
// table, asked with this kind), with their shapes and dtypes.
void check_epilogue_operands(const GemmViewArgs& v, Operands& o, ops::Stage stage) {
  GemmArgs kind_only;
  kind_only.epilogue.kind = v.epilogue;
  const ops::GemmProblem parts = ops::make_gemm_problem(kind_only);
  if (parts.has_bias) {
    o.bias_bytes = vector("bias", v.bias, o.N, "shape [N] =", v.d.dtype, "added to every row of d", stage);
  } else {
    check_absent("bias", v.bias, v.epilogue);
  }
  if (parts.aux_in || parts.aux_out) {
    o.aux = matrix("aux", v.aux, false, parts.aux_out ? "the pre-activation [M, N]" : "the activation's input [M, N]",
                   stage);
    const std::int64_t md[2] = {o.M, o.N};
    ops::check_shape(kFn, "aux", v.aux, md, 2, "d's shape");
    ops::check_dtype_or_f32(kFn, "aux", v.aux, v.d.dtype, "d's");
    o.aux_out = parts.aux_out;
  } else {
    check_absent("aux", v.aux, v.epilogue);
  }
  const bool grad_of_a = v.epilogue == Epilogue::BGRADA;
  if (parts.bias_grad != ops::GemmBiasGrad::none) {
    o.grad_bytes =
        vector("bias_grad", v.bias_grad, grad_of_a ? o.M : o.N, grad_of_a ? "shape [M] =" : "shape [N] =", v.d.dtype,
               grad_of_a ? "the sums over k of op(a)" : "the sums over rows", stage);
  } else {
    check_absent("bias_grad", v.bias_grad, v.epilogue);
  }
  if (v.bias.present && v.bias_grad.present && v.bias.dtype != v.bias_grad.dtype)
    fail(kFn, "bias and bias_grad must have one dtype, but got ", v.bias.describe(), " and ", v.bias_grad.describe());
}

// Outputs must not overlap any other operand, except c == d exactly.
void check_overlap(const GemmViewArgs& v, const Operands& o) {
  struct Region {
    const char* name;
    const void* data;
    std::int64_t bytes;
    bool output;
  };
  const Region regions[] = {{"d", o.d.data, o.d.bytes, true},
                            {"aux", o.aux.data, o.aux.bytes, o.aux_out},
                            {"bias_grad", v.bias_grad.data, o.grad_bytes, true},
                            {"a", o.a.data, o.a.bytes, false},
                            {"b", o.b.data, o.b.bytes, false},
                            {"c", o.c.data, o.c.bytes, false},
                            {"bias", v.bias.data, o.bias_bytes, false}};
  constexpr std::size_t kD = 0, kC = 5;
  const bool c_is_d = o.c.data != nullptr && o.c.data == o.d.data && o.c.dtype == o.d.dtype && o.c.ld == o.d.ld;
  for (std::size_t i = 0; i < std::size(regions); ++i) {
    if (!regions[i].output) continue;
    for (std::size_t j = 0; j < std::size(regions); ++j) {
      if (j == i || (regions[j].output && j < i)) continue;  // each pair of outputs once
      const bool c_and_d = i == kD && j == kC;
      if (c_and_d && c_is_d) continue;
      if (ranges_overlap(regions[i].data, regions[i].bytes, regions[j].data, regions[j].bytes))
        fail(kFn, regions[i].name, " (output) must not overlap ", regions[j].name,
             c_and_d ? " unless c is d exactly (same data, dtype and row stride)" : "",
             ", but their memory ranges overlap");
    }
  }
}

// The column-major call computing dᵀ = op(b)ᵀ op(a)ᵀ (see the top of the file).
GemmArgs column_major_call(const GemmViewArgs& v, const Operands& o) {
  GemmArgs g;
  g.m = o.N;
  g.n = o.M;
  g.k = o.K;
  g.alpha = v.alpha;
  g.beta = v.beta;
  g.op_a = o.b.column_major ? flip(v.op_b) : v.op_b;
  g.a = o.b.data;
  g.a_dtype = o.b.dtype;
  g.lda = o.b.ld;
  g.op_b = o.a.column_major ? flip(v.op_a) : v.op_a;
  g.b = o.a.data;
  g.b_dtype = o.a.dtype;
  g.ldb = o.a.ld;
  if (v.beta != 0.0f) {
    g.c = o.c.data;
    g.c_dtype = o.c.dtype;
    g.ldc = o.c.ld;
  }
  g.d = const_cast<void*>(o.d.data);
  g.d_dtype = o.d.dtype;
  g.ldd = o.d.ld;
  g.epilogue.kind = v.epilogue == Epilogue::BGRADA   ? Epilogue::BGRADB
                    : v.epilogue == Epilogue::BGRADB ? Epilogue::BGRADA
                                                     : v.epilogue;
  g.epilogue.gelu = v.gelu;
  g.epilogue.bias = v.bias.data;
  g.epilogue.bias_grad = v.bias_grad.data;
  g.epilogue.bias_dtype = v.bias.present ? v.bias.dtype : v.bias_grad.present ? v.bias_grad.dtype : DType::f32;
  g.epilogue.accumulate_bias_grad = v.accumulate_bias_grad;
  g.epilogue.aux = const_cast<void*>(o.aux.data);
  g.epilogue.aux_dtype = o.aux.data != nullptr ? o.aux.dtype : DType::f32;
  g.epilogue.aux_ld = o.aux.ld;
  g.fp16_mode = v.fp16_mode;
  g.device = v.d.device;
  g.device_index = v.d.device_index;
  return g;
}

// Validates `v` and returns the column-major call that computes it.
GemmArgs translate(const GemmViewArgs& v, ops::Stage stage = ops::Stage::call) {
  check_enums(v);
  Operands o;
  check_matrices(v, o, stage);
  check_epilogue_operands(v, o, stage);
  if (stage == ops::Stage::call) check_overlap(v, o);
  return column_major_call(v, o);
}

}  // namespace

GemmArgs ops::column_major_gemm(const GemmViewArgs& v) noexcept {
  Operands o;
  o.a = layout(v.a);
  o.b = layout(v.b);
  o.d = layout(v.d);
  if (v.beta != 0.0f) o.c = layout(v.c);
  if (v.aux.present) o.aux = layout(v.aux);
  set_sizes(v, o);
  return column_major_call(v, o);
}

GemmArgs to_gemm_args(const GemmViewArgs& args) { return translate(args); }

void gemm(const GemmViewArgs& args, GemmReport* report) { gemm(translate(args), report); }

std::string gemm_check(const GemmViewArgs& args) noexcept {
  try {
    return gemm_check(translate(args));
  } catch (const Error& e) {
    return e.what();
  } catch (...) {
    return "gemm: out of memory while validating the arguments";
  }
}

std::string gemm_descriptor_check(const GemmViewArgs& args) noexcept {
  return ops::check_message(kFn, [&] {
    const std::string m = gemm_descriptor_check(translate(args, ops::Stage::descriptor));
    if (!m.empty()) throw Error(m);
  });
}

const char* gemm_kernel_name(const GemmViewArgs& args) { return gemm_kernel_name(translate(args)); }

}  // namespace ampkit
