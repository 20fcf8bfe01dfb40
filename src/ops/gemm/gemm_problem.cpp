// Decoding GemmArgs into a GemmProblem (ops layer): the fp16 mode flags, the epilogue's parts
// (bias, activation, aux in/out, bias gradient) and leading dimensions that mean nothing replaced
// by valid ones. Called once per call by gemm_validate (gemm_validate.cpp).
#include <algorithm>
#include <cstdint>

#include "ops/gemm/gemm_kernels.hpp"

namespace ampkit::cpu {

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

}  // namespace ampkit::cpu
