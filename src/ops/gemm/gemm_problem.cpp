// Decoding GemmArgs into a GemmProblem (ops layer): the fp16 mode flags, the epilogue's parts
// (bias, activation, aux in/out, bias gradient) and leading dimensions that mean nothing replaced
// by valid ones. Called once per call by gemm_validate (gemm_validate.cpp).
#include <algorithm>
#include <cstdint>
#include <iterator>

#include "ops/gemm/gemm_kernels.hpp"

namespace ampkit {
namespace ops {
namespace {

// What each epilogue does, in the order of the Epilogue enumeration (docs/DESIGN.md section 4).
struct EpilogueParts {
  Epilogue kind;
  const char* name;
  GemmActivation activation;
  bool bias, aux_in, aux_out;
  GemmBiasGrad bias_grad;
};
using A = GemmActivation;
using G = GemmBiasGrad;
// clang-format off
constexpr EpilogueParts kEpilogueParts[] = {
    //                                           activation  bias   aux_in aux_out bias gradient
    {Epilogue::DEFAULT,          "DEFAULT",       A::none,    false, false, false,  G::none},
    {Epilogue::BIAS,             "BIAS",          A::none,    true,  false, false,  G::none},
    {Epilogue::RELU,             "RELU",          A::relu,    false, false, false,  G::none},
    {Epilogue::RELU_BIAS,        "RELU_BIAS",     A::relu,    true,  false, false,  G::none},
    {Epilogue::RELU_AUX,         "RELU_AUX",      A::relu,    false, false, true,   G::none},
    {Epilogue::RELU_AUX_BIAS,    "RELU_AUX_BIAS", A::relu,    true,  false, true,   G::none},
    {Epilogue::GELU,             "GELU",          A::gelu,    false, false, false,  G::none},
    {Epilogue::GELU_BIAS,        "GELU_BIAS",     A::gelu,    true,  false, false,  G::none},
    {Epilogue::GELU_AUX,         "GELU_AUX",      A::gelu,    false, false, true,   G::none},
    {Epilogue::GELU_AUX_BIAS,    "GELU_AUX_BIAS", A::gelu,    true,  false, true,   G::none},
    {Epilogue::DGELU,            "DGELU",         A::dgelu,   false, true,  false,  G::none},
    {Epilogue::DGELU_BGRAD,      "DGELU_BGRAD",   A::dgelu,   false, true,  false,  G::rows_of_d},
    {Epilogue::DRELU,            "DRELU",         A::drelu,   false, true,  false,  G::none},
    {Epilogue::DRELU_BGRAD,      "DRELU_BGRAD",   A::drelu,   false, true,  false,  G::rows_of_d},
    {Epilogue::BGRADA,           "BGRADA",        A::none,    false, false, false,  G::rows_of_a},
    {Epilogue::BGRADB,           "BGRADB",        A::none,    false, false, false,  G::cols_of_b},
};
// clang-format on
constexpr bool table_follows_the_enumeration() {
  for (int i = 0; i < static_cast<int>(std::size(kEpilogueParts)); ++i)
    if (static_cast<int>(kEpilogueParts[i].kind) != i) return false;
  return std::size(kEpilogueParts) == static_cast<std::size_t>(Epilogue::BGRADB) + 1;
}
static_assert(table_follows_the_enumeration(), "kEpilogueParts must list every Epilogue in order");

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
  const EpilogueParts& e = kEpilogueParts[static_cast<int>(args.epilogue.kind)];
  p.activation = e.activation;
  p.has_bias = e.bias;
  p.aux_in = e.aux_in;
  p.aux_out = e.aux_out;
  p.bias_grad = e.bias_grad;
  return p;
}

bool gemm_runs_one_entry(const GemmProblem& problem) {
  const GemmArgs& a = problem.args;
  return a.m > 0 && a.n > 0 && !(a.alpha == 0.0f && a.k > 0);
}

}  // namespace ops

const char* epilogue_name(Epilogue e) noexcept {
  const auto i = static_cast<std::size_t>(e);
  return i < std::size(ops::kEpilogueParts) ? ops::kEpilogueParts[i].name : "?";
}

}  // namespace ampkit
