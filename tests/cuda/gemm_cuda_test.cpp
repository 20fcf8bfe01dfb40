// The CUDA GEMM against the CPU (tests/cuda/): every epilogue x dtype mix (the fp16 modes
// included) x op(A)/op(B) x edge shapes and padded leading dimensions, device operands through
// the public gemm() with GemmArgs::device = cuda, compared with the CPU gemm on the same inputs
// within bounds from the dtypes and sum|a b|; bits identical across two runs; the fp16 counters
// equal the CPU's. Skips (saying why) without a usable GPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "ampkit/ops/gemm.hpp"
#include "cuda_test_support.hpp"

namespace ampkit::cuda_test {
namespace {

struct Mix {
  const char* name;
  DType a, b, cd, vec;  // vec: bias and aux
  Fp16Mode mode;
};

struct Shape {
  std::int64_t m, n, k;
};

constexpr Shape kShapes[] = {{1, 1, 1}, {17, 13, 5}, {64, 48, 33}, {129, 67, 130}, {6, 5, 0}};
constexpr Epilogue kEpilogues[] = {Epilogue::DEFAULT,  Epilogue::BIAS,          Epilogue::RELU,   Epilogue::RELU_BIAS,
                                   Epilogue::RELU_AUX, Epilogue::RELU_AUX_BIAS, Epilogue::GELU,   Epilogue::GELU_BIAS,
                                   Epilogue::GELU_AUX, Epilogue::GELU_AUX_BIAS, Epilogue::DGELU,  Epilogue::DGELU_BGRAD,
                                   Epilogue::DRELU,    Epilogue::DRELU_BGRAD,   Epilogue::BGRADA, Epilogue::BGRADB};

bool has_bias(Epilogue e) {
  return e == Epilogue::BIAS || e == Epilogue::RELU_BIAS || e == Epilogue::RELU_AUX_BIAS || e == Epilogue::GELU_BIAS ||
         e == Epilogue::GELU_AUX_BIAS;
}
bool aux_out(Epilogue e) {
  return e == Epilogue::RELU_AUX || e == Epilogue::RELU_AUX_BIAS || e == Epilogue::GELU_AUX ||
         e == Epilogue::GELU_AUX_BIAS;
}
bool aux_in(Epilogue e) {
  return e == Epilogue::DGELU || e == Epilogue::DGELU_BGRAD || e == Epilogue::DRELU || e == Epilogue::DRELU_BGRAD;
}
int bias_grad_kind(Epilogue e) {  // 0 none, 1 length m, 2 length n
  if (e == Epilogue::DGELU_BGRAD || e == Epilogue::DRELU_BGRAD || e == Epilogue::BGRADA) return 1;
  return e == Epilogue::BGRADB ? 2 : 0;
}

// One call's host operands and outputs; outputs hold their initial contents.
struct Problem {
  GemmArgs args;
  HostArray a, b, c, d, bias, aux, bias_grad;
};

Problem make_problem(const Mix& mix, Shape s, Op op_a, Op op_b, Epilogue e, std::int64_t pad, float alpha, float beta,
                     bool accumulate, std::mt19937_64& rng) {
  Problem p;
  GemmArgs& g = p.args;
  g.op_a = op_a;
  g.op_b = op_b;
  g.m = s.m;
  g.n = s.n;
  g.k = s.k;
  g.alpha = alpha;
  g.beta = beta;
  const std::int64_t a_rows = op_a == Op::N ? s.m : s.k, a_cols = op_a == Op::N ? s.k : s.m;
  const std::int64_t b_rows = op_b == Op::N ? s.k : s.n, b_cols = op_b == Op::N ? s.n : s.k;
  g.lda = std::max<std::int64_t>(1, a_rows + pad);
  g.ldb = std::max<std::int64_t>(1, b_rows + pad);
  g.ldd = std::max<std::int64_t>(1, s.m + pad);
  p.a = HostArray(mix.a, g.lda * a_cols);
  p.b = HostArray(mix.b, g.ldb * b_cols);
  fill_random(p.a, rng, -1.0f, 1.0f, true);  // f16 operands get some subnormals (the modes)
  fill_random(p.b, rng, -1.0f, 1.0f, true);
  g.a_dtype = mix.a;
  g.b_dtype = mix.b;
  g.c_dtype = g.d_dtype = mix.cd;
  p.d = HostArray(mix.cd, g.ldd * s.n);
  fill_random(p.d, rng, 100.0f, 200.0f);  // poison: never a plausible result
  if (beta != 0.0f) {
    g.ldc = g.ldd;
    p.c = HostArray(mix.cd, g.ldc * s.n);
    fill_random(p.c, rng);
  }
  g.fp16_mode = mix.mode;
  GemmEpilogue& ep = g.epilogue;
  ep.kind = e;
  ep.gelu = rng() % 2 == 0 ? GeluVariant::tanh : GeluVariant::erf;
  ep.bias_dtype = mix.vec;
  ep.aux_dtype = mix.vec;
  ep.accumulate_bias_grad = accumulate;
  if (has_bias(e)) {
    p.bias = HostArray(mix.vec, s.m);
    fill_random(p.bias, rng);
  }
  if (aux_out(e) || aux_in(e)) {
    ep.aux_ld = std::max<std::int64_t>(1, s.m + (rng() % 2 == 0 ? 0 : 8));
    p.aux = HostArray(mix.vec, ep.aux_ld * s.n);
    fill_random(p.aux, rng, aux_in(e) ? -2.0f : 100.0f, aux_in(e) ? 2.0f : 200.0f);
  }
  if (const int kind = bias_grad_kind(e)) {
    p.bias_grad = HostArray(mix.vec, kind == 2 ? s.n : s.m);
    fill_random(p.bias_grad, rng, accumulate ? -1.0f : 100.0f, accumulate ? 1.0f : 200.0f);
  }
  return p;
}

// Points args at the given buffers (host or device copies of Problem's arrays).
GemmArgs with_buffers(const GemmArgs& g, void* a, void* b, void* c, void* d, void* bias, void* aux, void* bias_grad) {
  GemmArgs out = g;
  out.a = a;
  out.b = b;
  out.c = c;
  out.d = d;
  out.epilogue.bias = bias;
  out.epilogue.aux = aux;
  out.epilogue.bias_grad = bias_grad;
  return out;
}

struct Outputs {
  HostArray d, aux, bias_grad;
  GemmReport report;
};

Outputs run_cpu(const Problem& p) {
  Outputs o{p.d, p.aux, p.bias_grad, {}};
  HostArray a = p.a, b = p.b, c = p.c, bias = p.bias;
  const GemmArgs g =
      with_buffers(p.args, a.data(), b.data(), c.data(), o.d.data(), bias.data(), o.aux.data(), o.bias_grad.data());
  gemm(g, &o.report);
  return o;
}

Outputs run_gpu(const Problem& p) {
  DeviceArray a(p.a), b(p.b), c(p.c), d(p.d), bias(p.bias), aux(p.aux), bias_grad(p.bias_grad);
  GemmArgs g = with_buffers(p.args, a.get(), b.get(), c.get(), d.get(), bias.get(), aux.get(), bias_grad.get());
  g.device = Device::cuda;
  Outputs o;
  gemm(g, &o.report);
  o.d = d.to_host(p.d.t);
  o.aux = aux.to_host(p.aux.t);
  o.bias_grad = bias_grad.to_host(p.bias_grad.t);
  return o;
}

// |op(A)(i, kk)| |op(B)(kk, j)| summed over kk, for the error bounds.
double abs_product(const Problem& p, std::int64_t i, std::int64_t j) {
  const GemmArgs& g = p.args;
  double s = 0.0;
  for (std::int64_t kk = 0; kk < g.k; ++kk) {
    const float x = p.a.get(g.op_a == Op::N ? i + kk * g.lda : kk + i * g.lda);
    const float y = p.b.get(g.op_b == Op::N ? kk + j * g.ldb : j + kk * g.ldb);
    s += std::fabs(static_cast<double>(x) * y);
  }
  return s;
}

// Compares one output element; returns false (and reports, up to a few) when outside the bound.
bool close(double got, double want, double bound, const std::string& what) {
  if (std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= bound) return true;
  ADD_FAILURE() << what << ": got " << got << ", want " << want << " (bound " << bound << ")";
  return false;
}

bool same_bits(const HostArray& x, const HostArray& y) { return x.bytes == y.bytes; }

// 1 when an f16 output whose exact value is `want` may round to either side of the subnormal
// edge 2^-14 within its error bound: the device and the CPU may then count it differently.
int near_f16_subnormal_edge(double want, double bound) {
  return std::fabs(std::fabs(want) - 0x1p-14) <= bound + 0x1p-25 ? 1 : 0;
}

// Runs one case on both devices and checks every output; returns the number of bad elements.
int check_case(const Mix& mix, Shape s, Op op_a, Op op_b, Epilogue e, std::mt19937_64& rng, std::uint64_t seed) {
  const std::int64_t pad = rng() % 3 == 0 ? 3 : 0;
  const float alpha = rng() % 5 == 0 ? 0.0f : (rng() % 2 == 0 ? 1.0f : 0.75f);
  const float beta = rng() % 2 == 0 ? 0.0f : 0.5f;
  const bool accumulate = rng() % 2 == 0;
  const Problem p = make_problem(mix, s, op_a, op_b, e, pad, alpha, beta, accumulate, rng);
  const Outputs want = run_cpu(p);
  const Outputs got = run_gpu(p);
  const Outputs again = run_gpu(p);
  const GemmArgs& g = p.args;
  const std::string where = std::string(mix.name) + " " + (op_a == Op::N ? "N" : "T") + (op_b == Op::N ? "N" : "T") +
                            " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k) +
                            " epilogue " + std::to_string(static_cast<int>(e)) + " alpha=" + std::to_string(alpha) +
                            " beta=" + std::to_string(beta) + " seed=" + std::to_string(seed) + " kernel " +
                            got.report.kernel;
  int bad = 0;
  if (!same_bits(got.d, again.d) || !same_bits(got.aux, again.aux) || !same_bits(got.bias_grad, again.bias_grad)) {
    ADD_FAILURE() << where << ": two runs gave different bits";
    ++bad;
  }
  // The CUDA list's reference entry runs the CPU reference on host copies: the CPU reference's
  // bits and counters, on device memory.
  Outputs ref_gpu, ref_cpu;
  {
    ReferenceOnly reference;
    ref_gpu = run_gpu(p);
    ref_cpu = run_cpu(p);
  }
  if (std::string(ref_gpu.report.kernel) != "gemm_ref_cuda" || !same_bits(ref_gpu.d, ref_cpu.d) ||
      !same_bits(ref_gpu.aux, ref_cpu.aux) || !same_bits(ref_gpu.bias_grad, ref_cpu.bias_grad) ||
      ref_gpu.report.fp16_subnormal_outputs != ref_cpu.report.fp16_subnormal_outputs) {
    ADD_FAILURE() << where << ": the reference entry " << ref_gpu.report.kernel << " differs from the CPU reference "
                  << ref_cpu.report.kernel;
    ++bad;
  }
  // Accumulation error of the product (tensor cores may truncate partial sums): (k + 8) 2^-22.
  const double acc = static_cast<double>(g.k + 8) * 0x1p-22;
  std::vector<double> row_abs(static_cast<std::size_t>(g.m), 0.0), row_err(static_cast<std::size_t>(g.m), 0.0);
  std::int64_t ambiguous = 0;  // f16 outputs whose subnormal count may differ within the bounds
  for (std::int64_t j = 0; j < g.n; ++j) {
    for (std::int64_t i = 0; i < g.m; ++i) {
      double scale = std::fabs(alpha) * abs_product(p, i, j);
      if (beta != 0.0f) scale += std::fabs(beta * p.c.get(i + j * g.ldc));
      if (has_bias(e)) scale += std::fabs(p.bias.get(i));
      const double err = acc * scale + 0x1p-18 * scale + 0x1p-24;
      row_abs[static_cast<std::size_t>(i)] += scale;
      row_err[static_cast<std::size_t>(i)] += err;
      const std::int64_t di = i + j * g.ldd;
      const double want_d = want.d.get(di);
      const double bound_d = 2.0 * unit_roundoff(g.d_dtype) * std::fabs(want_d) + 1.2 * err + 0x1p-24;
      if (!close(got.d.get(di), want_d, bound_d, where + " D(" + std::to_string(i) + "," + std::to_string(j) + ")"))
        ++bad;
      if (g.d_dtype == DType::f16) ambiguous += near_f16_subnormal_edge(want_d, bound_d);
      if (aux_out(e)) {
        const std::int64_t ai = i + j * g.epilogue.aux_ld;
        const double want_aux = want.aux.get(ai);
        const double bound_aux = 2.0 * unit_roundoff(g.epilogue.aux_dtype) * std::fabs(want_aux) + err;
        if (!close(got.aux.get(ai), want_aux, bound_aux,
                   where + " aux(" + std::to_string(i) + "," + std::to_string(j) + ")"))
          ++bad;
        if (g.epilogue.aux_dtype == DType::f16) ambiguous += near_f16_subnormal_edge(want_aux, bound_aux);
      }
      if (bad > 3) return bad;
    }
  }
  if (const int kind = bias_grad_kind(e)) {
    const std::int64_t len = kind == 2 ? g.n : g.m;
    for (std::int64_t r = 0; r < len; ++r) {
      double bound = 2.0 * unit_roundoff(g.epilogue.bias_dtype) * std::fabs(want.bias_grad.get(r)) + 1e-6;
      if (e == Epilogue::BGRADA || e == Epilogue::BGRADB) {
        double sum_abs = 0.0;
        for (std::int64_t kk = 0; kk < g.k; ++kk)
          sum_abs += e == Epilogue::BGRADA ? std::fabs(p.a.get(g.op_a == Op::N ? r + kk * g.lda : kk + r * g.lda))
                                           : std::fabs(p.b.get(g.op_b == Op::N ? kk + r * g.ldb : r + kk * g.ldb));
        bound += static_cast<double>(g.k + 2) * 0x1p-23 * sum_abs;
      } else {
        // Each summand's own error, then the fp32 summation over n (values up to 1.2 scale).
        const auto ri = static_cast<std::size_t>(r);
        bound += 1.2 * row_err[ri] + static_cast<double>(g.n + 2) * 0x1p-23 * 1.2 * row_abs[ri];
      }
      if (!close(got.bias_grad.get(r), want.bias_grad.get(r), bound, where + " bias_grad(" + std::to_string(r) + ")"))
        ++bad;
    }
  }
  const long long out_diff = got.report.fp16_subnormal_outputs - want.report.fp16_subnormal_outputs;
  if (got.report.fp16_subnormal_inputs != want.report.fp16_subnormal_inputs ||
      (out_diff < 0 ? -out_diff : out_diff) > ambiguous) {
    ADD_FAILURE() << where << ": fp16 counters (inputs, outputs) (" << got.report.fp16_subnormal_inputs << ", "
                  << got.report.fp16_subnormal_outputs << "), but the CPU counted ("
                  << want.report.fp16_subnormal_inputs << ", " << want.report.fp16_subnormal_outputs << "), with "
                  << ambiguous << " outputs within their bound of the subnormal edge";
    ++bad;
  }
  return bad;
}

void check_mix(const Mix& mix) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  int bad = 0;
  for (Epilogue e : kEpilogues)
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T})
        for (Shape s : kShapes) {
          bad += check_case(mix, s, op_a, op_b, e, rng, seed);
          if (bad > 5) return;
        }
}

// The problem with D, C and aux laid out with leading dimension m + pad (same values).
Problem repadded(const Problem& p, std::int64_t pad) {
  Problem q = p;
  GemmArgs& g = q.args;
  const std::int64_t m = g.m, n = g.n;
  const auto relaid = [&](const HostArray& from, std::int64_t from_ld) {
    HostArray to(from.t, (m + pad) * n);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) to.set(i + j * (m + pad), from.get(i + j * from_ld));
    return to;
  };
  q.d = relaid(p.d, g.ldd);
  g.ldd = m + pad;
  if (p.c.size() > 0) {
    q.c = relaid(p.c, g.ldc);
    g.ldc = m + pad;
  }
  if (p.aux.size() > 0) {
    q.aux = relaid(p.aux, g.epilogue.aux_ld);
    g.epilogue.aux_ld = m + pad;
  }
  return q;
}

// ampkit's epilogue through its vector kernel (m and every leading dimension a multiple of 4)
// and its plain kernel (leading dimensions m + 1), with another grid: the same bits.
void check_epilogue_kernels_agree(const Mix& mix, Epilogue e, std::mt19937_64& rng, std::uint64_t seed) {
  Problem p = make_problem(mix, {256, 200, 64}, Op::T, Op::N, e, 0, 1.0f, 0.5f, false, rng);
  p = repadded(p, 0);  // aux_ld = m as well
  // An f32 D with the tanh GELU_AUX_BIAS would run inside cuBLASLt when aligned.
  if (mix.cd == DType::f32) p.args.epilogue.gelu = GeluVariant::erf;
  const Problem q = repadded(p, 1);
  const Outputs vec = run_gpu(p), plain = run_gpu(q);
  EXPECT_TRUE(std::string(vec.report.kernel) == "gemm_cublaslt_epilogue_cuda") << "kernel " << vec.report.kernel;
  const auto differing = [&](const HostArray& a, std::int64_t lda, const HostArray& b, std::int64_t ldb) {
    std::int64_t count = 0;
    for (std::int64_t j = 0; j < p.args.n; ++j)
      for (std::int64_t i = 0; i < p.args.m; ++i) {
        const float x = a.get(i + j * lda), y = b.get(i + j * ldb);
        count += std::memcmp(&x, &y, sizeof x) != 0;
      }
    return count;
  };
  const std::string where =
      std::string(mix.name) + " epilogue " + std::to_string(static_cast<int>(e)) + " seed=" + std::to_string(seed);
  EXPECT_TRUE(differing(vec.d, p.args.ldd, plain.d, q.args.ldd) == 0) << where << ": D differs";
  if (aux_out(e)) {
    EXPECT_TRUE(differing(vec.aux, p.args.epilogue.aux_ld, plain.aux, q.args.epilogue.aux_ld) == 0)
        << where << ": aux differs";
  }
  EXPECT_TRUE(same_bits(vec.bias_grad, plain.bias_grad)) << where << ": the bias gradient differs";
  EXPECT_TRUE(vec.report.fp16_subnormal_outputs == plain.report.fp16_subnormal_outputs)
      << where << ": subnormal output counts " << vec.report.fp16_subnormal_outputs << " and "
      << plain.report.fp16_subnormal_outputs;
}

}  // namespace

TEST(CudaGemm, VectorAndPlainEpilogueKernelsGiveTheSameBits) {
  AMPKIT_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const Mix mixes[] = {{"bf16", DType::bf16, DType::bf16, DType::bf16, DType::bf16, Fp16Mode::exact},
                       {"bf16+f32 vec", DType::bf16, DType::bf16, DType::bf16, DType::f32, Fp16Mode::exact},
                       {"f16 flush", DType::f16, DType::f16, DType::f16, DType::f16, Fp16Mode::flush},
                       {"f32", DType::f32, DType::f32, DType::f32, DType::f32, Fp16Mode::exact}};
  for (const Mix& mix : mixes)
    for (Epilogue e : {Epilogue::GELU_AUX_BIAS, Epilogue::RELU_AUX_BIAS, Epilogue::DGELU_BGRAD, Epilogue::DRELU_BGRAD})
      check_epilogue_kernels_agree(mix, e, rng, seed);
}

TEST(CudaGemm, F32) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"f32", DType::f32, DType::f32, DType::f32, DType::f32, Fp16Mode::exact});
}
TEST(CudaGemm, Bf16) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"bf16", DType::bf16, DType::bf16, DType::bf16, DType::bf16, Fp16Mode::exact});
}
TEST(CudaGemm, Bf16InF32Out) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"bf16->f32", DType::bf16, DType::bf16, DType::f32, DType::f32, Fp16Mode::exact});
}
TEST(CudaGemm, Bf16WithF32BiasAndAux) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"bf16+f32 vec", DType::bf16, DType::bf16, DType::bf16, DType::f32, Fp16Mode::exact});
}
TEST(CudaGemm, F16Exact) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"f16 exact", DType::f16, DType::f16, DType::f16, DType::f16, Fp16Mode::exact});
}
TEST(CudaGemm, F16Alt) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"f16 alt", DType::f16, DType::f16, DType::f16, DType::f16, Fp16Mode::alt});
}
TEST(CudaGemm, F16Flush) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"f16 flush", DType::f16, DType::f16, DType::f16, DType::f16, Fp16Mode::flush});
}
TEST(CudaGemm, F16AltF32Out) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"f16 alt->f32", DType::f16, DType::f16, DType::f32, DType::f32, Fp16Mode::alt});
}
TEST(CudaGemm, MixedBf16F32) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"bf16 x f32", DType::bf16, DType::f32, DType::f32, DType::f32, Fp16Mode::exact});
}
TEST(CudaGemm, MixedF16Bf16Alt) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"f16 x bf16 alt", DType::f16, DType::bf16, DType::bf16, DType::bf16, Fp16Mode::alt});
}
TEST(CudaGemm, MixedF16F32Flush) {
  AMPKIT_REQUIRE_GPU();
  check_mix({"f16 x f32 flush", DType::f16, DType::f32, DType::f16, DType::f32, Fp16Mode::flush});
}

// Large problems against the CPU: the fused path (bf16 DEFAULT, f16 GELU_AUX_BIAS) and ampkit's
// epilogue (bf16 GELU_AUX_BIAS: cuBLASLt rounds a bf16 D before its epilogue).
void check_large(const Mix& mix, Epilogue e, const char* kernel) {
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const Problem p = make_problem(mix, {256, 192, 1024}, Op::T, Op::N, e, 0, 1.0f, 0.0f, false, rng);
  const Outputs want = run_cpu(p);
  const Outputs got = run_gpu(p);
  int bad = 0;
  for (std::int64_t i = 0; i < p.d.size() && bad < 5; ++i) {
    const double w = want.d.get(i);
    if (std::fabs(got.d.get(i) - w) > 2.0 * unit_roundoff(mix.cd) * std::fabs(w) + 1e-3) {
      ADD_FAILURE() << mix.name << " D[" << i << "] = " << got.d.get(i) << ", want " << w << " (seed " << seed << ")";
      ++bad;
    }
  }
  EXPECT_TRUE(std::string(got.report.kernel) == kernel) << "kernel " << got.report.kernel << ", expected " << kernel;
}

TEST(CudaGemm, LargeProblems) {
  AMPKIT_REQUIRE_GPU();
  const Mix bf16{"bf16 large", DType::bf16, DType::bf16, DType::bf16, DType::bf16, Fp16Mode::exact};
  const Mix f16{"f16 large", DType::f16, DType::f16, DType::f16, DType::f16, Fp16Mode::exact};
  check_large(bf16, Epilogue::DEFAULT, "gemm_cublaslt_fused_cuda");
  check_large(bf16, Epilogue::GELU_AUX_BIAS, "gemm_cublaslt_epilogue_cuda");
  check_large(f16, Epilogue::GELU_AUX_BIAS, "gemm_cublaslt_epilogue_cuda");  // a report asks for f16 counts
  check_large(bf16, Epilogue::BGRADB, "gemm_cublaslt_fused_cuda");
}

}  // namespace ampkit::cuda_test
