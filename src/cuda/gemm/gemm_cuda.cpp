// The CUDA GEMM (CUDA layer): cuBLASLt computes the product (tensor cores, fp32 accumulation);
// the epilogue runs inside cuBLASLt where cuBLASLt implements it exactly as DESIGN.md section 4
// defines (gemm_cublaslt_fused_cuda), and otherwise in ampkit's own kernels on cuBLASLt's fp32
// product (gemm_cublaslt_epilogue_cuda: erf GELU, f32 bias with a 16-bit D, aux = the
// pre-activation, DGELU/DRELU, every bias gradient, the flush mode, mixed dtypes). The fp16 mode
// is applied to the operands by a conversion kernel first. Entries of gemm_cuda_kernel_list.cpp.
#include "cuda/gemm/gemm_cuda.hpp"

#include <cstdint>

#include "ampkit/core/error.hpp"
#include "cuda/gemm/gemm_cuda_kernels.hpp"
#include "cuda/runtime/cuda_check.hpp"
#include "cuda/runtime/cuda_context.hpp"

namespace ampkit::cuda {
namespace {

constexpr const char* kFn = "gemm";

cudaDataType_t cuda_type(DType t) { return t == DType::f32 ? CUDA_R_32F : t == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F; }

// One cuBLASLt matmul: D = epilogue(alpha op(A) op(B) + beta C), column-major.
struct LtCall {
  Op op_a = Op::N, op_b = Op::N;
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  const void* a = nullptr;
  DType a_t = DType::f32;
  std::int64_t lda = 0;
  const void* b = nullptr;
  DType b_t = DType::f32;
  std::int64_t ldb = 0;
  const void* c = nullptr;  // null: beta == 0
  DType c_t = DType::f32;
  std::int64_t ldc = 0;
  void* d = nullptr;
  DType d_t = DType::f32;
  std::int64_t ldd = 0;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  DType bias_t = DType::f32;
  void* aux = nullptr;
  DType aux_t = DType::f32;
  std::int64_t aux_ld = 0;
};

// The descriptors of one call, destroyed on every path out.
struct LtDescriptors {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtDescriptors() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

template <class T>
void set_desc(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr, const T& value, const char* what) {
  check_cublas(cublasLtMatmulDescSetAttribute(desc, attr, &value, sizeof value), kFn, what);
}

// Runs the call; false when cuBLASLt's heuristic has no algorithm for it (nothing enqueued).
bool lt_matmul(CudaContext& ctx, const LtCall& call) {
  cublasLtHandle_t handle = lt_handle(ctx, kFn);
  LtDescriptors lt;
  check_cublas(cublasLtMatmulDescCreate(&lt.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), kFn, "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = call.op_a == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = call.op_b == Op::T ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_desc(lt.desc, CUBLASLT_MATMUL_DESC_TRANSA, ta, "setting TRANSA");
  set_desc(lt.desc, CUBLASLT_MATMUL_DESC_TRANSB, tb, "setting TRANSB");
  set_desc(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, call.epilogue, "setting the epilogue");
  if (call.bias != nullptr) {
    set_desc(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, call.bias, "setting the bias pointer");
    set_desc(lt.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, cuda_type(call.bias_t), "setting the bias dtype");
  }
  if (call.aux != nullptr) {
    set_desc(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, call.aux, "setting the aux pointer");
    set_desc(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, call.aux_ld, "setting the aux ld");
    set_desc(lt.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, cuda_type(call.aux_t), "setting the aux dtype");
  }
  const auto layout = [](cublasLtMatrixLayout_t* out, DType t, std::int64_t rows, std::int64_t cols, std::int64_t ld) {
    check_cublas(cublasLtMatrixLayoutCreate(out, cuda_type(t), static_cast<std::uint64_t>(rows),
                                            static_cast<std::uint64_t>(cols), ld),
                 kFn, "cublasLtMatrixLayoutCreate");
  };
  layout(&lt.a, call.a_t, call.op_a == Op::N ? call.m : call.k, call.op_a == Op::N ? call.k : call.m, call.lda);
  layout(&lt.b, call.b_t, call.op_b == Op::N ? call.k : call.n, call.op_b == Op::N ? call.n : call.k, call.ldb);
  layout(&lt.d, call.d_t, call.m, call.n, call.ldd);
  const bool has_c = call.c != nullptr;
  if (has_c) layout(&lt.c, call.c_t, call.m, call.n, call.ldc);
  check_cublas(cublasLtMatmulPreferenceCreate(&lt.pref), kFn, "cublasLtMatmulPreferenceCreate");
  const std::uint64_t ws = kLtWorkspaceBytes;
  check_cublas(cublasLtMatmulPreferenceSetAttribute(lt.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
               kFn, "setting the workspace preference");
  // Split-k partials summed in place (by atomics) would make the bits vary between runs.
  const std::uint32_t schemes =
      CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE | CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
  check_cublas(cublasLtMatmulPreferenceSetAttribute(lt.pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &schemes,
                                                    sizeof schemes),
               kFn, "setting the reduction-scheme preference");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(handle, lt.desc, lt.a, lt.b, has_c ? lt.c : lt.d, lt.d,
                                                               lt.pref, 1, &result, &found);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && found == 0)) return false;
  check_cublas(status, kFn, "cublasLtMatmulAlgoGetHeuristic");
  check_cublas(
      cublasLtMatmul(handle, lt.desc, &call.alpha, call.a, lt.a, call.b, lt.b, &call.beta, has_c ? call.c : call.d,
                     has_c ? lt.c : lt.d, call.d, lt.d, &result.algo, ctx.lt_workspace, kLtWorkspaceBytes, ctx.stream),
      kFn, "cublasLtMatmul");
  return true;
}

// The operand dtype the product sees after the fp16 mode: alt turns f16 into bf16.
DType moded(const ops::GemmProblem& p, DType t) { return p.alt && t == DType::f16 ? DType::bf16 : t; }

bool has_product(const ops::GemmProblem& p) {
  const GemmArgs& a = p.args;
  return a.m > 0 && a.n > 0 && a.k > 0 && a.alpha != 0.0f;
}

// The operands as the product sees them: converted into workspace when the mode changes them or
// when A and B end up in two dtypes (then both in f32, exact). Counts f16 subnormal inputs.
struct Operands {
  const void* a;
  DType a_t;
  std::int64_t lda;
  const void* b;
  DType b_t;
  std::int64_t ldb;
};

struct Plan {
  std::size_t conv_a = 0, conv_b = 0, product = 0, partials = 0, total = 0;
  bool convert_a = false, convert_b = false;
  DType a_t = DType::f32, b_t = DType::f32;
  std::int64_t partial_blocks = 0, partial_length = 0;
};

Plan make_plan(const ops::GemmProblem& p, bool generic) {
  const GemmArgs& a = p.args;
  Plan plan;
  WorkspaceCarver carve;
  const bool product = has_product(p);
  plan.a_t = moded(p, a.a_dtype);
  plan.b_t = moded(p, a.b_dtype);
  if (product) {
    const bool mode_a = a.a_dtype == DType::f16 && (p.flush || p.alt);
    const bool mode_b = a.b_dtype == DType::f16 && (p.flush || p.alt);
    if (plan.a_t != plan.b_t) plan.a_t = plan.b_t = DType::f32;
    plan.convert_a = mode_a || plan.a_t != a.a_dtype;
    plan.convert_b = mode_b || plan.b_t != a.b_dtype;
    const auto bytes = [](std::int64_t r, std::int64_t c, DType t) {
      return static_cast<std::size_t>(r) * static_cast<std::size_t>(c) * dtype_size(t);
    };
    if (plan.convert_a) plan.conv_a = carve.add(bytes(a.m, a.k, plan.a_t));
    if (plan.convert_b) plan.conv_b = carve.add(bytes(a.k, a.n, plan.b_t));
    if (generic) plan.product = carve.add(bytes(a.m, a.n, DType::f32));
  }
  const auto blocks = [](std::int64_t len) { return (len + kBiasGradBlock - 1) / kBiasGradBlock; };
  switch (p.bias_grad) {
    case ops::GemmBiasGrad::none: break;
    case ops::GemmBiasGrad::rows_of_d:
      plan.partial_blocks = a.m > 0 && a.n > 0 ? blocks(a.n) : 0;
      plan.partial_length = a.m;
      break;
    case ops::GemmBiasGrad::rows_of_a:
      plan.partial_blocks = blocks(a.k);
      plan.partial_length = a.m;
      break;
    case ops::GemmBiasGrad::cols_of_b:
      plan.partial_blocks = blocks(a.k);
      plan.partial_length = a.n;
      break;
  }
  if (plan.partial_blocks > 0)
    plan.partials = carve.add(static_cast<std::size_t>(plan.partial_blocks * plan.partial_length) * sizeof(float));
  plan.total = carve.total();
  return plan;
}

Operands prepare_operands(const ops::GemmProblem& p, const Plan& plan, char* ws, CudaContext& ctx) {
  const GemmArgs& a = p.args;
  Operands o{a.a, a.a_dtype, a.lda, a.b, a.b_dtype, a.ldb};
  if (!has_product(p)) return o;
  long long* inputs = p.want_counters ? ctx.counters : nullptr;
  const std::int64_t a_rows = a.op_a == Op::N ? a.m : a.k, a_cols = a.op_a == Op::N ? a.k : a.m;
  const std::int64_t b_rows = a.op_b == Op::N ? a.k : a.n, b_cols = a.op_b == Op::N ? a.n : a.k;
  if (plan.convert_a) {
    convert_matrix(a.a, a.a_dtype, a_rows, a_cols, a.lda, ws + plan.conv_a, plan.a_t, p.flush, p.alt, inputs,
                   ctx.stream);
    o = {ws + plan.conv_a, plan.a_t, a_rows, o.b, o.b_t, o.ldb};
  } else if (inputs != nullptr && a.a_dtype == DType::f16) {
    convert_matrix(a.a, a.a_dtype, a_rows, a_cols, a.lda, nullptr, a.a_dtype, false, false, inputs, ctx.stream);
  }
  if (plan.convert_b) {
    convert_matrix(a.b, a.b_dtype, b_rows, b_cols, a.ldb, ws + plan.conv_b, plan.b_t, p.flush, p.alt, inputs,
                   ctx.stream);
    o.b = ws + plan.conv_b;
    o.b_t = plan.b_t;
    o.ldb = b_rows;
  } else if (inputs != nullptr && a.b_dtype == DType::f16) {
    convert_matrix(a.b, a.b_dtype, b_rows, b_cols, a.ldb, nullptr, a.b_dtype, false, false, inputs, ctx.stream);
  }
  return o;
}

LtCall product_call(const ops::GemmProblem& p, const Operands& o) {
  const GemmArgs& a = p.args;
  LtCall call;
  call.op_a = a.op_a;
  call.op_b = a.op_b;
  call.m = a.m;
  call.n = a.n;
  call.k = a.k;
  call.alpha = a.alpha;
  call.a = o.a;
  call.a_t = o.a_t;
  call.lda = o.lda;
  call.b = o.b;
  call.b_t = o.b_t;
  call.ldb = o.ldb;
  return call;
}

void begin_counting(const ops::GemmProblem& p, CudaContext& ctx) {
  if (p.want_counters)
    check_cuda(cudaMemsetAsync(ctx.counters, 0, 2 * sizeof(long long), ctx.stream), kFn,
               "cudaMemsetAsync of the counters");
}

void finish_counting(const ops::GemmProblem& p, CudaContext& ctx, ops::GemmCounters& counters) {
  if (!p.want_counters) return;
  long long host[2] = {0, 0};
  check_cuda(cudaMemcpyAsync(host, ctx.counters, sizeof host, cudaMemcpyDeviceToHost, ctx.stream), kFn,
             "cudaMemcpyAsync of the counters");
  check_cuda(cudaStreamSynchronize(ctx.stream), kFn, "cudaStreamSynchronize for the counters");
  counters.fp16_subnormal_inputs += host[0];
  counters.fp16_subnormal_outputs += host[1];
}

// BGRADA / BGRADB: the sums of op(A)'s rows or op(B)'s columns over k, as given.
void write_operand_sums(const ops::GemmProblem& p, const Plan& plan, char* ws, CudaContext& ctx) {
  const GemmArgs& a = p.args;
  const GemmEpilogue& e = a.epilogue;
  if (p.bias_grad != ops::GemmBiasGrad::rows_of_a && p.bias_grad != ops::GemmBiasGrad::cols_of_b) return;
  float* partials = plan.partial_blocks > 0 ? reinterpret_cast<float*>(ws + plan.partials) : nullptr;
  if (p.bias_grad == ops::GemmBiasGrad::rows_of_a) {
    const bool by_k = a.op_a == Op::T;  // op(A)(r, kk) = A[kk + r lda]
    operand_sum_partials(a.a, a.a_dtype, a.m, a.k, by_k ? a.lda : 1, by_k ? 1 : a.lda, partials, ctx.stream);
  } else {
    const bool by_k = a.op_b == Op::N;  // op(B)(kk, j) = B[kk + j ldb]
    operand_sum_partials(a.b, a.b_dtype, a.n, a.k, by_k ? a.ldb : 1, by_k ? 1 : a.ldb, partials, ctx.stream);
  }
  reduce_partials(partials, plan.partial_blocks, plan.partial_length, e.bias_grad, e.bias_dtype, e.accumulate_bias_grad,
                  ctx.stream);
}

// The general path: product into fp32 workspace, ampkit's epilogue, the bias gradients.
void run_with_own_epilogue(const ops::GemmProblem& p, CudaContext& ctx, ops::GemmCounters& counters) {
  const GemmArgs& a = p.args;
  const GemmEpilogue& e = a.epilogue;
  const Plan plan = make_plan(p, true);
  char* ws = static_cast<char*>(workspace(ctx, plan.total, kFn));
  begin_counting(p, ctx);
  const Operands o = prepare_operands(p, plan, ws, ctx);
  float* product = nullptr;
  if (has_product(p)) {
    product = reinterpret_cast<float*>(ws + plan.product);
    LtCall call = product_call(p, o);
    call.d = product;
    call.d_t = DType::f32;
    call.ldd = a.m;
    if (!lt_matmul(ctx, call))
      fail_with(ErrorKind::unsupported, kFn, "cuBLASLt has no algorithm for op(A) ", dtype_name(o.a_t), " x op(B) ",
                dtype_name(o.b_t), " -> f32 (m ", a.m, ", n ", a.n, ", k ", a.k, ", lda ", o.lda, ", ldb ", o.ldb, ")");
  }
  float* partials = plan.partial_blocks > 0 ? reinterpret_cast<float*>(ws + plan.partials) : nullptr;
  EpilogueLaunch el;
  el.product = product;
  el.m = a.m;
  el.n = a.n;
  el.beta = a.beta;
  el.c = p.use_c ? a.c : nullptr;
  el.c_dtype = a.c_dtype;
  el.ldc = a.ldc;
  el.bias = p.has_bias ? e.bias : nullptr;
  el.bias_dtype = e.bias_dtype;
  el.aux = e.aux;
  el.aux_dtype = e.aux_dtype;
  el.aux_ld = e.aux_ld;
  el.aux_out = p.aux_out;
  el.aux_in = p.aux_in;
  el.activation = p.activation;
  el.gelu = e.gelu;
  el.d = a.d;
  el.d_dtype = a.d_dtype;
  el.ldd = a.ldd;
  el.flush = p.flush;
  el.subnormal_outputs = p.want_counters ? ctx.counters + 1 : nullptr;
  el.bias_partials = p.bias_grad == ops::GemmBiasGrad::rows_of_d ? partials : nullptr;
  gemm_epilogue(el, ctx.stream);
  if (p.bias_grad == ops::GemmBiasGrad::rows_of_d)
    reduce_partials(partials, plan.partial_blocks, plan.partial_length, e.bias_grad, e.bias_dtype,
                    e.accumulate_bias_grad, ctx.stream);
  write_operand_sums(p, plan, ws, ctx);
  finish_counting(p, ctx, counters);
}

cublasLtEpilogue_t lt_epilogue(Epilogue kind) {
  switch (kind) {
    case Epilogue::BIAS: return CUBLASLT_EPILOGUE_BIAS;
    case Epilogue::RELU: return CUBLASLT_EPILOGUE_RELU;
    case Epilogue::RELU_BIAS: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilogue::GELU: return CUBLASLT_EPILOGUE_GELU;
    case Epilogue::GELU_BIAS: return CUBLASLT_EPILOGUE_GELU_BIAS;
    case Epilogue::GELU_AUX: return CUBLASLT_EPILOGUE_GELU_AUX;
    case Epilogue::GELU_AUX_BIAS: return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    default: return CUBLASLT_EPILOGUE_DEFAULT;
  }
}

}  // namespace

const char* gemm_cublaslt_fused_declines(const ops::GemmProblem& p) {
  const GemmArgs& a = p.args;
  const GemmEpilogue& e = a.epilogue;
  if (!has_product(p)) return "no product (m, n or k is 0, or alpha = 0)";
  if (p.bias_grad == ops::GemmBiasGrad::rows_of_d)
    return "DGELU/DRELU_BGRAD run in ampkit's epilogue and fixed-order sums";
  if (p.aux_in) return "DGELU/DRELU run in ampkit's epilogue (cuBLASLt's is tanh-only and measured slow)";
  if (p.aux_out && p.activation == ops::GemmActivation::relu)
    return "cuBLASLt's RELU aux is a bit mask, ampkit's the pre-activation";
  if (p.activation == ops::GemmActivation::gelu && e.gelu == GeluVariant::erf) return "cuBLASLt has the tanh GELU only";
  if (p.flush) return "the flush mode's f16 outputs are flushed by ampkit's epilogue";
  const DType at = moded(p, a.a_dtype), bt = moded(p, a.b_dtype);
  if (at != bt) return "A and B have different dtypes (after the fp16 mode)";
  if (a.d_dtype != DType::f32 && a.d_dtype != at) return "cuBLASLt takes D in the operands' dtype or f32 only";
  // Measured on the H200 (CUDA 13.0): with a bf16 D, cuBLASLt's BIAS and GELU epilogues act on
  // the product already rounded to bf16 (errors of several bf16 ulps); f16 and f32 D are exact.
  if (a.d_dtype == DType::bf16 && e.kind != Epilogue::DEFAULT && p.bias_grad == ops::GemmBiasGrad::none)
    return "cuBLASLt rounds a bf16 D's product before its epilogue (measured): one rounding needs ampkit's epilogue";
  if (p.use_c && a.c_dtype != a.d_dtype) return "cuBLASLt takes C in D's dtype only";
  if (p.has_bias && e.bias_dtype != a.d_dtype) return "cuBLASLt takes the bias in D's dtype only";
  if (p.aux_out && (e.aux_dtype != a.d_dtype || e.aux_ld % 8 != 0))
    return "cuBLASLt takes aux in D's dtype with aux_ld a multiple of 8";
  if (p.want_counters && (a.d_dtype == DType::f16 || (p.aux_out && e.aux_dtype == DType::f16)))
    return "counting f16 subnormal outputs needs ampkit's epilogue";
  return nullptr;
}

void gemm_cublaslt_fused_cuda(const ops::GemmProblem& p, ops::GemmCounters& counters) {
  const GemmArgs& a = p.args;
  const GemmEpilogue& e = a.epilogue;
  CudaContext& ctx = context(a.device_index, kFn);
  const Plan plan = make_plan(p, false);
  char* ws = static_cast<char*>(workspace(ctx, plan.total, kFn));
  begin_counting(p, ctx);
  const Operands o = prepare_operands(p, plan, ws, ctx);
  LtCall call = product_call(p, o);
  call.beta = a.beta;
  call.c = p.use_c ? a.c : nullptr;
  call.c_t = a.c_dtype;
  call.ldc = a.ldc;
  call.d = a.d;
  call.d_t = a.d_dtype;
  call.ldd = a.ldd;
  call.epilogue = lt_epilogue(e.kind);
  if (p.has_bias) {
    call.bias = e.bias;
    call.bias_t = e.bias_dtype;
  }
  if (p.aux_out) {
    call.aux = e.aux;
    call.aux_t = e.aux_dtype;
    call.aux_ld = e.aux_ld;
  }
  if (!lt_matmul(ctx, call)) {
    run_with_own_epilogue(p, ctx, counters);  // e.g. an alignment cuBLASLt's fused kernels lack
    return;
  }
  write_operand_sums(p, plan, ws, ctx);  // BGRADA / BGRADB: the product above is the plain one
  finish_counting(p, ctx, counters);
}

void gemm_cublaslt_epilogue_cuda(const ops::GemmProblem& p, ops::GemmCounters& counters) {
  run_with_own_epilogue(p, context(p.args.device_index, kFn), counters);
}

}  // namespace ampkit::cuda
