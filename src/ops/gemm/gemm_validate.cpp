// GEMM argument validation (kernels layer): every check gemm() makes before it touches an
// output, as one message naming the function, the argument, what was expected and what was
// given. Called by gemm / gemm_check / gemm_kernel_name (gemm_front_end.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "ampkit/core/error.hpp"
#include "ampkit/core/tensor.hpp"
#include "ops/device_memory.hpp"
#include "ops/gemm/gemm_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr const char* kFn = "gemm";

const char* epilogue_name(Epilogue e) {
  switch (e) {
    case Epilogue::DEFAULT: return "DEFAULT";
    case Epilogue::BIAS: return "BIAS";
    case Epilogue::RELU: return "RELU";
    case Epilogue::RELU_BIAS: return "RELU_BIAS";
    case Epilogue::RELU_AUX: return "RELU_AUX";
    case Epilogue::RELU_AUX_BIAS: return "RELU_AUX_BIAS";
    case Epilogue::GELU: return "GELU";
    case Epilogue::GELU_BIAS: return "GELU_BIAS";
    case Epilogue::GELU_AUX: return "GELU_AUX";
    case Epilogue::GELU_AUX_BIAS: return "GELU_AUX_BIAS";
    case Epilogue::DGELU: return "DGELU";
    case Epilogue::DGELU_BGRAD: return "DGELU_BGRAD";
    case Epilogue::DRELU: return "DRELU";
    case Epilogue::DRELU_BGRAD: return "DRELU_BGRAD";
    case Epilogue::BGRADA: return "BGRADA";
    case Epilogue::BGRADB: return "BGRADB";
  }
  return "?";
}

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

}  // namespace

GemmProblem make_gemm_problem(const GemmArgs& args) {
  GemmProblem p;
  p.args = args;
  p.fp16 = args.a_dtype == DType::f16 || args.b_dtype == DType::f16;
  p.flush = p.fp16 && args.fp16_mode == Fp16Mode::flush;
  p.alt = p.fp16 && args.fp16_mode == Fp16Mode::alt;
  p.use_c = args.beta != 0.0f;
  // A leading dimension means nothing for a matrix with no element or a single column, so a valid
  // call may give any value there (2^62 included); engines form column pointers from it before
  // their loops, and that product can overflow. The smallest valid value describes the same matrix.
  const auto tidy = [](std::int64_t& ld, std::int64_t rows, std::int64_t cols) {
    if (rows == 0 || cols <= 1) ld = std::max<std::int64_t>(1, rows);
  };
  const bool a_n = args.op_a == Op::N, b_n = args.op_b == Op::N;
  tidy(p.args.lda, a_n ? args.m : args.k, a_n ? args.k : args.m);
  tidy(p.args.ldb, b_n ? args.k : args.n, b_n ? args.n : args.k);
  tidy(p.args.ldc, args.m, args.n);
  tidy(p.args.ldd, args.m, args.n);
  tidy(p.args.epilogue.aux_ld, args.m, args.n);
  switch (args.epilogue.kind) {
    case Epilogue::DEFAULT: break;
    case Epilogue::BIAS: p.has_bias = true; break;
    case Epilogue::RELU: p.activation = GemmActivation::relu; break;
    case Epilogue::RELU_BIAS:
      p.activation = GemmActivation::relu;
      p.has_bias = true;
      break;
    case Epilogue::RELU_AUX:
      p.activation = GemmActivation::relu;
      p.aux_out = true;
      break;
    case Epilogue::RELU_AUX_BIAS: p.activation = GemmActivation::relu, p.aux_out = true, p.has_bias = true; break;
    case Epilogue::GELU: p.activation = GemmActivation::gelu; break;
    case Epilogue::GELU_BIAS:
      p.activation = GemmActivation::gelu;
      p.has_bias = true;
      break;
    case Epilogue::GELU_AUX:
      p.activation = GemmActivation::gelu;
      p.aux_out = true;
      break;
    case Epilogue::GELU_AUX_BIAS: p.activation = GemmActivation::gelu, p.aux_out = true, p.has_bias = true; break;
    case Epilogue::DGELU:
      p.activation = GemmActivation::dgelu;
      p.aux_in = true;
      break;
    case Epilogue::DGELU_BGRAD:
      p.activation = GemmActivation::dgelu, p.aux_in = true, p.bias_grad = GemmBiasGrad::rows_of_d;
      break;
    case Epilogue::DRELU:
      p.activation = GemmActivation::drelu;
      p.aux_in = true;
      break;
    case Epilogue::DRELU_BGRAD:
      p.activation = GemmActivation::drelu, p.aux_in = true, p.bias_grad = GemmBiasGrad::rows_of_d;
      break;
    case Epilogue::BGRADA: p.bias_grad = GemmBiasGrad::rows_of_a; break;
    case Epilogue::BGRADB: p.bias_grad = GemmBiasGrad::cols_of_b; break;
  }
  return p;
}

std::string gemm_validate(const GemmArgs& a) {
  using detail::concat;
  const GemmEpilogue& e = a.epilogue;
  // Enumerations first: everything below switches on them.
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
    if (const char* why = ops::cuda_unavailable())
      return concat(kFn, ": device is cuda:", a.device_index, ", but ", why);
    if (a.device_index < 0 || a.device_index >= ops::cuda_usable_devices())
      return concat(kFn, ": device_index must name one of this machine's ", ops::cuda_usable_devices(),
                    " CUDA device(s), but got ", a.device_index);
  }

  // Sizes.
  if (a.m < 0) return concat(kFn, ": m must be >= 0, but got ", a.m);
  if (a.n < 0) return concat(kFn, ": n must be >= 0, but got ", a.n);
  if (a.k < 0) return concat(kFn, ": k must be >= 0, but got ", a.k);

  const GemmProblem p = make_gemm_problem(a);
  const char* ep = epilogue_name(e.kind);

  // Leading dimensions: at least the rows of the matrix as stored (and at least 1).
  const std::int64_t a_rows = a.op_a == Op::N ? a.m : a.k, a_cols = a.op_a == Op::N ? a.k : a.m;
  const std::int64_t b_rows = a.op_b == Op::N ? a.k : a.n, b_cols = a.op_b == Op::N ? a.n : a.k;
  const auto ld_message = [&](const char* ld_name, std::int64_t ld, const char* what, std::int64_t need,
                              const char* extra) {
    return concat(kFn, ": ", ld_name, " (", ld, ") must be >= ", what, " (", need, ")", extra);
  };
  if (a.lda < (a_rows > 1 ? a_rows : 1))
    return ld_message("lda", a.lda, a.op_a == Op::N ? "max(1, m)" : "max(1, k)", a_rows > 1 ? a_rows : 1,
                      a.op_a == Op::N ? " for op(A) = N" : " for op(A) = T");
  if (a.ldb < (b_rows > 1 ? b_rows : 1))
    return ld_message("ldb", a.ldb, a.op_b == Op::N ? "max(1, k)" : "max(1, n)", b_rows > 1 ? b_rows : 1,
                      a.op_b == Op::N ? " for op(B) = N" : " for op(B) = T");
  const std::int64_t m1 = a.m > 1 ? a.m : 1;
  if (a.ldd < m1) return ld_message("ldd", a.ldd, "max(1, m)", m1, "");
  if (a.c != nullptr && a.ldc < m1) return ld_message("ldc", a.ldc, "max(1, m)", m1, "");
  const bool uses_aux = p.aux_in || p.aux_out;
  if (uses_aux && e.aux_ld < m1)
    return ld_message("epilogue.aux_ld", e.aux_ld, "max(1, m)", m1, concat(" for epilogue ", ep).c_str());

  // Which epilogue pointers must be set and which must not.
  const bool needs_bias_grad = p.bias_grad != GemmBiasGrad::none;
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
  if ((p.has_bias || needs_bias_grad) && e.bias_dtype != DType::f32 && e.bias_dtype != a.d_dtype)
    return concat(kFn, ": epilogue.bias_dtype must be f32 or d_dtype (", dtype_name(a.d_dtype), "), but got ",
                  dtype_name(e.bias_dtype));
  if (uses_aux && e.aux_dtype != DType::f32 && e.aux_dtype != a.d_dtype)
    return concat(kFn, ": epilogue.aux_dtype must be f32 or d_dtype (", dtype_name(a.d_dtype), "), but got ",
                  dtype_name(e.aux_dtype));

  // Null data pointers with non-zero sizes.
  if (a.a == nullptr && a.m > 0 && a.k > 0)
    return concat(kFn, ": a is null but op(A) has ", a.m, " x ", a.k, " elements");
  if (a.b == nullptr && a.k > 0 && a.n > 0)
    return concat(kFn, ": b is null but op(B) has ", a.k, " x ", a.n, " elements");
  if (a.d == nullptr && a.m > 0 && a.n > 0) return concat(kFn, ": d is null but D has ", a.m, " x ", a.n, " elements");
  if (p.use_c && a.c == nullptr && a.m > 0 && a.n > 0)
    return concat(kFn, ": c must be set when beta != 0 (beta = ", a.beta, "), but it is null");
  if (p.use_c && a.ldc < m1) return ld_message("ldc", a.ldc, "max(1, m)", m1, "");

  // Byte footprints (int64 overflow is an error: no such buffer can exist).
  const std::int64_t a_bytes = matrix_bytes(a_rows, a_cols, a.lda, a.a_dtype);
  const std::int64_t b_bytes = matrix_bytes(b_rows, b_cols, a.ldb, a.b_dtype);
  const std::int64_t c_bytes = a.c != nullptr ? matrix_bytes(a.m, a.n, a.ldc, a.c_dtype) : 0;
  const std::int64_t d_bytes = matrix_bytes(a.m, a.n, a.ldd, a.d_dtype);
  const std::int64_t aux_bytes = uses_aux ? matrix_bytes(a.m, a.n, e.aux_ld, e.aux_dtype) : 0;
  const std::int64_t bias_bytes = p.has_bias ? matrix_bytes(a.m, 1, 1, e.bias_dtype) : 0;
  const std::int64_t bias_grad_bytes = needs_bias_grad ? matrix_bytes(bias_grad_len, 1, 1, e.bias_dtype) : 0;
  const struct {
    const char* name;
    std::int64_t bytes;
    std::int64_t rows, cols, ld;
  } sizes[] = {{"A", a_bytes, a_rows, a_cols, a.lda},
               {"B", b_bytes, b_rows, b_cols, a.ldb},
               {"C", c_bytes, a.m, a.n, a.ldc},
               {"D", d_bytes, a.m, a.n, a.ldd},
               {"aux", aux_bytes, a.m, a.n, e.aux_ld}};
  for (const auto& s : sizes)
    if (s.bytes < 0)
      return concat(kFn, ": the size of ", s.name, " (", s.rows, " x ", s.cols, ", ld ", s.ld,
                    ") in bytes must fit in int64, but it overflows");
  if (bias_bytes < 0 || bias_grad_bytes < 0)
    return concat(kFn, ": the size of the bias vector in bytes must fit in int64, but it overflows");

  // Aliasing: no output may overlap any other operand, except C == D exactly.
  if (a.c != nullptr && c_bytes > 0 && a.c == a.d && (a.c_dtype != a.d_dtype || a.ldc != a.ldd))
    return concat(kFn, ": c may alias d only with the same dtype and leading dimension, but got c_dtype ",
                  dtype_name(a.c_dtype), " ldc ", a.ldc, " and d_dtype ", dtype_name(a.d_dtype), " ldd ", a.ldd);
  const Region regions[] = {
      {"d", a.d, d_bytes, true},
      {"epilogue.aux", p.aux_out ? e.aux : nullptr, aux_bytes, true},
      {"epilogue.bias_grad", e.bias_grad, bias_grad_bytes, true},
      {"a", a.a, a_bytes, false},
      {"b", a.b, b_bytes, false},
      {"c", p.use_c ? a.c : nullptr, c_bytes, false},
      {"epilogue.bias", e.bias, bias_bytes, false},
      {"epilogue.aux", p.aux_in ? e.aux : nullptr, aux_bytes, false},
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
  // Device memory: every pointer the call uses is memory of that GPU (looked up, never read).
  if (a.device == Device::cuda) {
    const struct {
      const char* name;
      const void* ptr;
      std::int64_t bytes;
    } used[] = {{"a", a.a, a_bytes},
                {"b", a.b, b_bytes},
                {"c", p.use_c ? a.c : nullptr, c_bytes},
                {"d", a.d, d_bytes},
                {"epilogue.aux", e.aux, aux_bytes},
                {"epilogue.bias", e.bias, bias_bytes},
                {"epilogue.bias_grad", e.bias_grad, bias_grad_bytes}};
    for (const auto& u : used)
      if (u.ptr != nullptr && u.bytes > 0)
        if (const char* why = ops::cuda_pointer_problem(u.ptr, a.device_index))
          return concat(kFn, ": ", u.name, " must be device memory of cuda:", a.device_index,
                        " (args.device), but it is ", why);
  }
  return {};
}

}  // namespace ampkit::cpu
