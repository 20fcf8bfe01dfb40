// GEMM argument validation (ops layer): every check gemm() makes before it touches an output, in
// order (enumerations, sizes, leading dimensions, epilogue operands, data pointers, byte sizes,
// aliasing, device memory), as one message naming the function, the argument, what was expected
// and what was given; a valid call is decoded once into its GemmProblem. Called by the front end
// (gemm_front_end.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/core/tensor.hpp"
#include "ops/backend.hpp"
#include "ops/gemm/gemm_kernels.hpp"

namespace ampkit::ops {
namespace {

constexpr const char* kFn = "gemm";

bool valid_dtype(DType t) { return t == DType::f32 || t == DType::bf16 || t == DType::f16; }

// Byte span of a column-major rows x cols matrix with leading dimension ld (elements), or -1 on
// int64 overflow. An empty matrix spans 0 bytes.
std::int64_t matrix_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, DType t) {
  if (rows == 0 || cols == 0) return 0;
  std::int64_t elements = 0, bytes = 0;
  if (__builtin_mul_overflow(cols - 1, ld, &elements)) return -1;
  if (__builtin_add_overflow(elements, rows, &elements)) return -1;
  if (__builtin_mul_overflow(elements, static_cast<std::int64_t>(dtype_size(t)), &bytes)) return -1;
  return bytes;
}

struct Region {
  const char* name;
  const void* data;
  std::int64_t bytes;
  bool output;
};

using detail::concat;

// The enumerations and dtypes (everything after them switches on these), then the device.
std::string check_enums(const GemmArgs& a) {
  const GemmEpilogue& e = a.epilogue;
  if (a.op_a != Op::N && a.op_a != Op::T)
    return concat(kFn, ": op_a must be N or T, but got ", static_cast<int>(a.op_a));
  if (a.op_b != Op::N && a.op_b != Op::T)
    return concat(kFn, ": op_b must be N or T, but got ", static_cast<int>(a.op_b));
  if (static_cast<int>(e.kind) > static_cast<int>(Epilogue::BGRADB))
    return concat(kFn, ": epilogue.kind must be an Epilogue value, but got ", static_cast<int>(e.kind));
  if (e.gelu != GeluVariant::tanh && e.gelu != GeluVariant::erf)
    return concat(kFn, ": epilogue.gelu must be tanh or erf, but got ", static_cast<int>(e.gelu));
  if (a.fp16_mode != Fp16Mode::exact && a.fp16_mode != Fp16Mode::flush && a.fp16_mode != Fp16Mode::alt)
    return concat(kFn, ": fp16_mode must be exact, flush or alt, but got ", static_cast<int>(a.fp16_mode));
  const struct {
    const char* name;
    DType t;
  } dtypes[] = {{"a_dtype", a.a_dtype},
                {"b_dtype", a.b_dtype},
                {"c_dtype", a.c_dtype},
                {"d_dtype", a.d_dtype},
                {"epilogue.bias_dtype", e.bias_dtype},
                {"epilogue.aux_dtype", e.aux_dtype}};
  for (const auto& d : dtypes)
    if (!valid_dtype(d.t))
      return concat(kFn, ": ", d.name, " must be f32, bf16 or f16, but got ", static_cast<int>(d.t));
  if (a.device != Device::cpu && a.device != Device::cuda)
    return concat(kFn, ": device must be cpu or cuda, but got ", static_cast<int>(a.device));
  if (a.device == Device::cuda) {
    if (const char* why = ops::backend(Device::cuda).unavailable())
      return concat(kFn, ": device is cuda:", a.device_index, ", but ", why);
    if (a.device_index < 0 || a.device_index >= ops::backend(Device::cuda).usable_devices())
      return concat(kFn, ": device_index must name one of this machine's ", ops::backend(Device::cuda).usable_devices(),
                    " CUDA device(s), but got ", a.device_index);
  }
  return {};
}

// The shapes of the operands as stored.
struct Shapes {
  std::int64_t a_rows, a_cols, b_rows, b_cols, m1;  // m1 = max(1, m)
  explicit Shapes(const GemmArgs& a)
      : a_rows(a.op_a == Op::N ? a.m : a.k),
        a_cols(a.op_a == Op::N ? a.k : a.m),
        b_rows(a.op_b == Op::N ? a.k : a.n),
        b_cols(a.op_b == Op::N ? a.n : a.k),
        m1(a.m > 1 ? a.m : 1) {}
};

std::string ld_message(const char* ld_name, std::int64_t ld, const char* what, std::int64_t need, const char* extra) {
  return concat(kFn, ": ", ld_name, " (", ld, ") must be >= ", what, " (", need, ")", extra);
}

// Leading dimensions: at least the rows of the matrix as stored (and at least 1).
std::string check_leading_dimensions(const GemmArgs& a, const GemmProblem& p, const Shapes& s) {
  if (a.lda < (s.a_rows > 1 ? s.a_rows : 1))
    return ld_message("lda", a.lda, a.op_a == Op::N ? "max(1, m)" : "max(1, k)", s.a_rows > 1 ? s.a_rows : 1,
                      a.op_a == Op::N ? " for op(A) = N" : " for op(A) = T");
  if (a.ldb < (s.b_rows > 1 ? s.b_rows : 1))
    return ld_message("ldb", a.ldb, a.op_b == Op::N ? "max(1, k)" : "max(1, n)", s.b_rows > 1 ? s.b_rows : 1,
                      a.op_b == Op::N ? " for op(B) = N" : " for op(B) = T");
  if (a.ldd < s.m1) return ld_message("ldd", a.ldd, "max(1, m)", s.m1, "");
  if (a.c != nullptr && a.ldc < s.m1) return ld_message("ldc", a.ldc, "max(1, m)", s.m1, "");
  if ((p.aux_in || p.aux_out) && a.epilogue.aux_ld < s.m1)
    return ld_message("epilogue.aux_ld", a.epilogue.aux_ld, "max(1, m)", s.m1,
                      concat(" for epilogue ", epilogue_name(a.epilogue.kind)).c_str());
  return {};
}

// Which epilogue pointers must be set and which must not, and their dtypes.
std::string check_epilogue_operands(const GemmArgs& a, const GemmProblem& p, ops::Stage stage) {
  const GemmEpilogue& e = a.epilogue;
  const char* ep = epilogue_name(e.kind);
  const bool uses_aux = p.aux_in || p.aux_out;
  const bool needs_bias_grad = p.bias_grad != GemmBiasGrad::none;
  // Which pointers are set is stage 2 here: GemmArgs says "present" by a non-null pointer.
  if (stage == ops::Stage::call) {
    if (p.has_bias && e.bias == nullptr && a.m > 0)
      return concat(kFn, ": epilogue.bias must be set (length m = ", a.m, ") for epilogue ", ep, ", but it is null");
    if (!p.has_bias && e.bias != nullptr)
      return concat(kFn, ": epilogue.bias must be null for epilogue ", ep, " (it reads no bias), but it is set");
    const std::int64_t bias_grad_len = p.bias_grad == GemmBiasGrad::cols_of_b ? a.n : a.m;
    if (needs_bias_grad && e.bias_grad == nullptr && bias_grad_len > 0)
      return concat(kFn, ": epilogue.bias_grad must be set (length ",
                    p.bias_grad == GemmBiasGrad::cols_of_b ? "n = " : "m = ", bias_grad_len, ") for epilogue ", ep,
                    ", but it is null");
    if (!needs_bias_grad && e.bias_grad != nullptr)
      return concat(kFn, ": epilogue.bias_grad must be null for epilogue ", ep,
                    " (it writes no bias gradient), but it is set");
    if (uses_aux && e.aux == nullptr && a.m > 0 && a.n > 0)
      return concat(kFn, ": epilogue.aux must be set (m x n = ", a.m, " x ", a.n, ") for epilogue ", ep,
                    ", but it is null");
    if (!uses_aux && e.aux != nullptr)
      return concat(kFn, ": epilogue.aux must be null for epilogue ", ep, " (it uses no aux matrix), but it is set");
  }
  if ((p.has_bias || needs_bias_grad) && e.bias_dtype != DType::f32 && e.bias_dtype != a.d_dtype)
    return concat(kFn, ": epilogue.bias_dtype must be f32 or d_dtype (", dtype_name(a.d_dtype), "), but got ",
                  dtype_name(e.bias_dtype));
  if (uses_aux && e.aux_dtype != DType::f32 && e.aux_dtype != a.d_dtype)
    return concat(kFn, ": epilogue.aux_dtype must be f32 or d_dtype (", dtype_name(a.d_dtype), "), but got ",
                  dtype_name(e.aux_dtype));
  return {};
}

// Null data pointers with non-zero sizes.
std::string check_data_pointers(const GemmArgs& a, const GemmProblem& p, const Shapes& s) {
  if (a.a == nullptr && a.m > 0 && a.k > 0)
    return concat(kFn, ": a is null but op(A) has ", a.m, " x ", a.k, " elements");
  if (a.b == nullptr && a.k > 0 && a.n > 0)
    return concat(kFn, ": b is null but op(B) has ", a.k, " x ", a.n, " elements");
  if (a.d == nullptr && a.m > 0 && a.n > 0) return concat(kFn, ": d is null but D has ", a.m, " x ", a.n, " elements");
  if (p.use_c && a.c == nullptr && a.m > 0 && a.n > 0)
    return concat(kFn, ": c must be set when beta != 0 (beta = ", a.beta, "), but it is null");
  if (p.use_c && a.ldc < s.m1) return ld_message("ldc", a.ldc, "max(1, m)", s.m1, "");
  return {};
}

// Byte footprints of every operand (-1: the size overflows int64).
struct Footprints {
  std::int64_t a, b, c, d, aux, bias, bias_grad;
  Footprints(const GemmArgs& g, const GemmProblem& p, const Shapes& s) {
    const GemmEpilogue& e = g.epilogue;
    a = matrix_bytes(s.a_rows, s.a_cols, g.lda, g.a_dtype);
    b = matrix_bytes(s.b_rows, s.b_cols, g.ldb, g.b_dtype);
    c = g.c != nullptr ? matrix_bytes(g.m, g.n, g.ldc, g.c_dtype) : 0;
    d = matrix_bytes(g.m, g.n, g.ldd, g.d_dtype);
    aux = p.aux_in || p.aux_out ? matrix_bytes(g.m, g.n, e.aux_ld, e.aux_dtype) : 0;
    bias = p.has_bias ? matrix_bytes(g.m, 1, 1, e.bias_dtype) : 0;
    const std::int64_t bias_grad_len = p.bias_grad == GemmBiasGrad::cols_of_b ? g.n : g.m;
    bias_grad = p.bias_grad != GemmBiasGrad::none ? matrix_bytes(bias_grad_len, 1, 1, e.bias_dtype) : 0;
  }
};

// No such buffer can exist when a byte size overflows int64.
std::string check_footprints(const GemmArgs& a, const Shapes& s, const Footprints& f) {
  const struct {
    const char* name;
    std::int64_t bytes;
    std::int64_t rows, cols, ld;
  } sizes[] = {{"A", f.a, s.a_rows, s.a_cols, a.lda},
               {"B", f.b, s.b_rows, s.b_cols, a.ldb},
               {"C", f.c, a.m, a.n, a.ldc},
               {"D", f.d, a.m, a.n, a.ldd},
               {"aux", f.aux, a.m, a.n, a.epilogue.aux_ld}};
  for (const auto& z : sizes)
    if (z.bytes < 0)
      return concat(kFn, ": the size of ", z.name, " (", z.rows, " x ", z.cols, ", ld ", z.ld,
                    ") in bytes must fit in int64, but it overflows");
  if (f.bias < 0 || f.bias_grad < 0)
    return concat(kFn, ": the size of the bias vector in bytes must fit in int64, but it overflows");
  return {};
}

// No output may overlap any other operand, except C == D exactly.
std::string check_aliasing(const GemmArgs& a, const GemmProblem& p, const Footprints& f) {
  const GemmEpilogue& e = a.epilogue;
  if (a.c != nullptr && f.c > 0 && a.c == a.d && (a.c_dtype != a.d_dtype || a.ldc != a.ldd))
    return concat(kFn, ": c may alias d only with the same dtype and leading dimension, but got c_dtype ",
                  dtype_name(a.c_dtype), " ldc ", a.ldc, " and d_dtype ", dtype_name(a.d_dtype), " ldd ", a.ldd);
  const Region regions[] = {
      {"d", a.d, f.d, true},
      {"epilogue.aux", p.aux_out ? e.aux : nullptr, f.aux, true},
      {"epilogue.bias_grad", e.bias_grad, f.bias_grad, true},
      {"a", a.a, f.a, false},
      {"b", a.b, f.b, false},
      {"c", p.use_c ? a.c : nullptr, f.c, false},
      {"epilogue.bias", e.bias, f.bias, false},
      {"epilogue.aux", p.aux_in ? e.aux : nullptr, f.aux, false},
  };
  constexpr int kCount = sizeof(regions) / sizeof(regions[0]);
  constexpr int kC = 5;
  for (int i = 0; i < kCount; ++i) {
    if (!regions[i].output) continue;
    for (int j = 0; j < kCount; ++j) {
      if (j == i || (regions[j].output && j < i)) continue;  // each pair of outputs once
      if (i == 0 && j == kC && a.c == a.d) continue;         // exact in-place C == D (checked above)
      if (ranges_overlap(regions[i].data, regions[i].bytes, regions[j].data, regions[j].bytes))
        return concat(kFn, ": ", regions[i].name, " (output) must not overlap ", regions[j].name,
                      ", but the memory ranges [", regions[i].data, ", +", regions[i].bytes, " bytes) and [",
                      regions[j].data, ", +", regions[j].bytes, " bytes) overlap");
    }
  }
  return {};
}

// Device memory: every pointer the call uses is memory of that GPU (looked up, never read).
std::string check_device_memory(const GemmArgs& a, const GemmProblem& p, const Footprints& f) {
  if (a.device != Device::cuda) return {};
  const GemmEpilogue& e = a.epilogue;
  const struct {
    const char* name;
    const void* ptr;
    std::int64_t bytes;
  } used[] = {{"a", a.a, f.a},
              {"b", a.b, f.b},
              {"c", p.use_c ? a.c : nullptr, f.c},
              {"d", a.d, f.d},
              {"epilogue.aux", e.aux, f.aux},
              {"epilogue.bias", e.bias, f.bias},
              {"epilogue.bias_grad", e.bias_grad, f.bias_grad}};
  for (const auto& u : used)
    if (u.ptr != nullptr && u.bytes > 0)
      if (const char* why = ops::backend(a.device).pointer_problem(u.ptr, a.device_index))
        return concat(kFn, ": ", u.name, " must be device memory of cuda:", a.device_index,
                      " (args.device), but it is ", why);
  return {};
}

}  // namespace

std::string gemm_validate(const GemmArgs& a, GemmProblem& problem, ops::Stage stage) {
  if (std::string m = check_enums(a); !m.empty()) return m;
  if (a.m < 0) return concat(kFn, ": m must be >= 0, but got ", a.m);
  if (a.n < 0) return concat(kFn, ": n must be >= 0, but got ", a.n);
  if (a.k < 0) return concat(kFn, ": k must be >= 0, but got ", a.k);
  const GemmProblem p = make_gemm_problem(a);
  const Shapes s(a);
  if (std::string m = check_leading_dimensions(a, p, s); !m.empty()) return m;
  if (std::string m = check_epilogue_operands(a, p, stage); !m.empty()) return m;
  if (stage == ops::Stage::call)
    if (std::string m = check_data_pointers(a, p, s); !m.empty()) return m;
  const Footprints f(a, p, s);
  if (std::string m = check_footprints(a, s, f); !m.empty()) return m;
  if (stage == ops::Stage::descriptor) {  // the rest is stage 2: aliasing and device memory
    problem = p;
    return {};
  }
  if (std::string m = check_aliasing(a, p, f); !m.empty()) return m;
  if (std::string m = check_device_memory(a, p, f); !m.empty()) return m;
  problem = p;
  return {};
}

std::string gemm_validate(const GemmArgs& args, ops::Stage stage) {
  GemmProblem unused;
  return gemm_validate(args, unused, stage);
}

}  // namespace ampkit::ops
