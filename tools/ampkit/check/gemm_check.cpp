// The GEMM part of `ampkit check kernels` (tools layer, check/): random cases over shapes (blocked
// and skinny), op(A)/op(B), dtypes and fp16 modes, and the epilogues (bias, GELU tanh/erf and
// RELU with aux, their gradients with the bias gradient, BGRADA/BGRADB, beta C), each run at the
// ISA under test and at `ref` (the reference kernel: double sums, one rounding), compared with a
// tolerance derived from the dtypes, k and sum|a b| (error_bounds.hpp's gemm_*, docs/NUMERICS.md).
#include "tools/ampkit/check/check_families.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ampkit/device/cpu.hpp"
#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/gemm.hpp"
#include "tools/ampkit/check/check_run.hpp"
#include "tools/ampkit/check/check_tensor.hpp"

namespace ampkit::tools::check {
namespace {

namespace eb = error_bounds;

struct Shape {
  std::int64_t m, n, k;
};

struct DtypeMix {
  DType a, b, d;
  Fp16Mode mode;
  const char* name;
};

struct EpilogueCase {
  Epilogue kind;
  GeluVariant gelu;
  float beta;
};

struct Buffers {
  CheckTensor a, b, c, d, bias, bias_grad, aux;
};

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
bool gelu_like(Epilogue e) {
  return e == Epilogue::GELU || e == Epilogue::GELU_BIAS || e == Epilogue::GELU_AUX || e == Epilogue::GELU_AUX_BIAS ||
         e == Epilogue::DGELU || e == Epilogue::DGELU_BGRAD;
}
// Length of the bias gradient: m (rows of D, BGRADA), n (BGRADB), 0 (none).
std::int64_t bias_grad_length(Epilogue e, const Shape& s) {
  if (e == Epilogue::DGELU_BGRAD || e == Epilogue::DRELU_BGRAD || e == Epilogue::BGRADA) return s.m;
  return e == Epilogue::BGRADB ? s.n : 0;
}

GemmArgs make_args(const Shape& s, Op op_a, Op op_b, const DtypeMix& t, const EpilogueCase& e, Buffers& x) {
  GemmArgs g;
  g.op_a = op_a, g.op_b = op_b, g.m = s.m, g.n = s.n, g.k = s.k;
  g.alpha = 1.0f, g.beta = e.beta;
  g.a = x.a.data(), g.a_dtype = t.a, g.lda = op_a == Op::N ? s.m : s.k;
  g.b = x.b.data(), g.b_dtype = t.b, g.ldb = op_b == Op::N ? s.k : s.n;
  if (e.beta != 0.0f) g.c = x.c.data(), g.c_dtype = t.d, g.ldc = s.m;
  g.d = x.d.data(), g.d_dtype = t.d, g.ldd = s.m;
  g.epilogue.kind = e.kind;
  g.epilogue.gelu = e.gelu;
  if (has_bias(e.kind)) g.epilogue.bias = x.bias.data();
  if (bias_grad_length(e.kind, s) > 0) g.epilogue.bias_grad = x.bias_grad.data();
  g.epilogue.bias_dtype = DType::f32;
  if (aux_out(e.kind) || aux_in(e.kind)) g.epilogue.aux = x.aux.data(), g.epilogue.aux_ld = s.m;
  g.epilogue.aux_dtype = DType::f32;
  g.fp16_mode = t.mode;
  return g;
}

// Runs g on a copy of the inputs, on the reference kernel (reference = true) or at `isa`;
// returns the outputs.
Buffers run_gemm(bool reference, Isa isa, const GemmArgs& g0, const Buffers& inputs, std::string* kernel) {
  Buffers out = inputs;
  GemmArgs g = g0;
  g.a = out.a.data(), g.b = out.b.data();
  if (g.c) g.c = out.c.data();
  g.d = out.d.data();
  if (g.epilogue.bias) g.epilogue.bias = out.bias.data();
  if (g.epilogue.bias_grad) g.epilogue.bias_grad = out.bias_grad.data();
  if (g.epilogue.aux) g.epilogue.aux = out.aux.data();
  GemmReport report;
  if (reference)
    run_reference([&] { gemm(g, &report); });
  else
    run_at(isa, [&] { gemm(g, &report); });
  if (kernel) *kernel = report.kernel;
  return out;
}

// Compares `got` with `want` (the reference's), both from `in`.
std::map<std::string, Deviation> compare(const GemmArgs& g, const Buffers& in, const Buffers& got,
                                         const Buffers& want) {
  const Epilogue e = g.epilogue.kind;
  const bool fp16 = g.a_dtype == DType::f16 || g.b_dtype == DType::f16;
  const bool flush = fp16 && g.fp16_mode == Fp16Mode::flush;
  const double alt_margin = fp16 && g.fp16_mode == Fp16Mode::alt ? 1.01 : 1.0;  // operands rounded to bf16
  const eb::GemmActivationBound act = !gelu_like(e) ? eb::GemmActivationBound::none
                                      : aux_in(e)   ? eb::GemmActivationBound::dgelu
                                                    : eb::GemmActivationBound::gelu;
  std::map<std::string, Deviation> dev;
  std::vector<double> grad_tol(static_cast<std::size_t>(g.m), 0.0), grad_mag(static_cast<std::size_t>(g.m), 0.0);
  for (std::int64_t j = 0; j < g.n; ++j)
    for (std::int64_t i = 0; i < g.m; ++i) {
      double s = 0.0;
      for (std::int64_t p = 0; p < g.k; ++p)
        s += std::fabs(in.a.get(g.op_a == Op::N ? i + p * g.lda : p + i * g.lda) *
                       in.b.get(g.op_b == Op::N ? p + j * g.ldb : j + p * g.ldb));
      double x = std::fabs(g.alpha) * s * alt_margin;
      if (g.beta != 0.0f) x += std::fabs(g.beta) * std::fabs(in.c.get(i + j * g.ldc));
      if (has_bias(e)) x += std::fabs(in.bias.get(i));
      const double pre_tol = eb::gemm_accumulation(g.k, x);
      const double aux_abs = aux_in(e) ? std::fabs(in.aux.get(i + j * g.m)) : 0.0;
      const double act_tol = eb::gemm_activation(act, pre_tol, x, aux_abs);
      const std::int64_t di = i + j * g.ldd;
      const double w = want.d.get(di);
      dev["D"].add(got.d.get(di), w, eb::gemm_output(act_tol, w, g.d_dtype, flush));
      if (aux_out(e)) {
        const double wa = want.aux.get(i + j * g.m);
        dev["aux"].add(got.aux.get(i + j * g.m), wa, eb::gemm_output(pre_tol, wa, DType::f32, flush));
      }
      grad_tol[static_cast<std::size_t>(i)] += act_tol;
      grad_mag[static_cast<std::size_t>(i)] += std::fabs(w) + act_tol;
    }
  const std::int64_t len = bias_grad_length(e, {g.m, g.n, g.k});
  for (std::int64_t r = 0; r < len; ++r) {
    double tol = 0.0;
    if (e == Epilogue::DGELU_BGRAD || e == Epilogue::DRELU_BGRAD) {
      tol = eb::gemm_bias_grad_of_d(g.n, grad_tol[static_cast<std::size_t>(r)], grad_mag[static_cast<std::size_t>(r)]);
    } else {  // BGRADA: row r of op(A) summed over k; BGRADB: column r of op(B)
      double mag = 0.0;
      for (std::int64_t p = 0; p < g.k; ++p)
        mag += e == Epilogue::BGRADA ? std::fabs(in.a.get(g.op_a == Op::N ? r + p * g.lda : p + r * g.lda))
                                     : std::fabs(in.b.get(g.op_b == Op::N ? p + r * g.ldb : r + p * g.ldb));
      tol = eb::gemm_bias_grad_of_operand(g.k, mag);
    }
    const double w = want.bias_grad.get(r);
    dev["bias_grad"].add(got.bias_grad.get(r), w, eb::gemm_bias_grad_output(tol, 0.0, w, DType::f32, flush));
  }
  return dev;
}

}  // namespace

void check_gemm(Isa isa, std::uint64_t seed, bool quick, CheckResults& results) {
  const std::vector<Shape> shapes = quick
                                        ? std::vector<Shape>{{1, 1, 1}, {5, 3, 7}, {3, 70, 129}, {96, 64, 300}}
                                        : std::vector<Shape>{{1, 1, 1},     {5, 3, 7},     {37, 20, 65},  {3, 70, 129},
                                                             {130, 2, 257}, {96, 64, 300}, {200, 150, 96}};
  const DtypeMix mixes[] = {
      {DType::f32, DType::f32, DType::f32, Fp16Mode::exact, "f32"},
      {DType::bf16, DType::bf16, DType::bf16, Fp16Mode::exact, "bf16"},
      {DType::bf16, DType::bf16, DType::f32, Fp16Mode::exact, "bf16->f32"},
      {DType::f16, DType::f16, DType::f16, Fp16Mode::exact, "f16 exact"},
      {DType::f16, DType::f16, DType::f16, Fp16Mode::flush, "f16 flush"},
      {DType::f16, DType::f16, DType::f16, Fp16Mode::alt, "f16 alt"},
      {DType::f16, DType::f16, DType::f32, Fp16Mode::alt, "f16->f32 alt"},
  };
  const EpilogueCase epilogues[] = {
      {Epilogue::DEFAULT, GeluVariant::tanh, 0.5f},       {Epilogue::BIAS, GeluVariant::tanh, 0.0f},
      {Epilogue::GELU_AUX_BIAS, GeluVariant::tanh, 0.0f}, {Epilogue::GELU_BIAS, GeluVariant::erf, 0.0f},
      {Epilogue::RELU_AUX_BIAS, GeluVariant::tanh, 0.0f}, {Epilogue::DGELU_BGRAD, GeluVariant::tanh, 0.0f},
      {Epilogue::DRELU_BGRAD, GeluVariant::tanh, 0.0f},   {Epilogue::BGRADA, GeluVariant::tanh, 0.0f},
      {Epilogue::BGRADB, GeluVariant::tanh, 0.0f},
  };
  const char* epilogue_names[] = {"DEFAULT beta 0.5", "BIAS",        "GELU_AUX_BIAS", "GELU_BIAS erf", "RELU_AUX_BIAS",
                                  "DGELU_BGRAD",      "DRELU_BGRAD", "BGRADA",        "BGRADB"};
  std::mt19937_64 rng(seed);
  int index = 0;
  for (const Shape& s : shapes)
    for (const DtypeMix& t : mixes)
      for (std::size_t e = 0; e < std::size(epilogues); ++e, ++index) {
        const Op op_a = index % 2 ? Op::T : Op::N, op_b = (index / 2) % 2 ? Op::T : Op::N;
        Buffers in;
        in.a = CheckTensor(t.a, s.m * s.k), in.b = CheckTensor(t.b, s.k * s.n);
        in.c = CheckTensor(t.d, s.m * s.n), in.d = CheckTensor(t.d, s.m * s.n);
        in.bias = CheckTensor(DType::f32, s.m), in.bias_grad = CheckTensor(DType::f32, std::max(s.m, s.n));
        in.aux = CheckTensor(DType::f32, s.m * s.n);
        const double scale = 1.0 / std::sqrt(static_cast<double>(s.k));  // D ~ N(0, 1)
        in.a.fill_normal(rng, 1.0), in.b.fill_normal(rng, scale), in.c.fill_normal(rng), in.bias.fill_normal(rng);
        in.aux.fill_normal(rng);
        const GemmArgs g = make_args(s, op_a, op_b, t, epilogues[e], in);
        std::string kernel;
        const Buffers want = run_gemm(true, isa, g, in, nullptr);
        const Buffers got = run_gemm(false, isa, g, in, &kernel);
        char what[160];
        std::snprintf(what, sizeof what, "%lldx%lldx%lld %s%s %s %s", static_cast<long long>(s.m),
                      static_cast<long long>(s.n), static_cast<long long>(s.k), op_a == Op::N ? "n" : "t",
                      op_b == Op::N ? "n" : "t", t.name, epilogue_names[e]);
        record(results, "gemm", kernel, what, compare(g, in, got, want));
      }
}

}  // namespace ampkit::tools::check
