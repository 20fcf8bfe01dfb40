// The GEMM on TensorViews (ampkit/ops/gemm_views.hpp) against a plain double reference written
// in the row-major convention it documents: op(a) [M, K] op(b) [K, N], bias along d's last dim,
// DGELU/DRELU bias gradients summed over d's rows, BGRADA over k of op(a), BGRADB over k of
// op(b). Both op orders, a and b in either layout, padded row strides, every ISA. Then bad calls:
// each gets a message naming the view, the same from gemm_check, and d stays untouched. And the
// unchecked translation Linear runs (ops::column_major_gemm) gives the checked one's call.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/numerics/error_bounds.hpp"
#include "ampkit/ops/gemm_views.hpp"
#include "ops/gemm/gemm_view_call.hpp"
#include "support/test_support.hpp"

namespace ampkit {
namespace {

using std::int64_t;
using testing::Buffer;

std::size_t at(int64_t i) { return static_cast<std::size_t>(i); }

using ::ampkit::testing::gelu_tanh;
using ::ampkit::testing::gelu_tanh_derivative;

// A matrix stored row-major (strides {ld, 1}) or column-major (strides {1, ld}), ld padded.
struct Stored {
  Buffer buffer;
  TensorView view;
  int64_t rows, cols, ld;
  bool column_major;
  double get(int64_t r, int64_t c) const { return buffer.get(column_major ? c * ld + r : r * ld + c); }
};

// The unchecked translation (ops::column_major_gemm, what Linear runs) gives, field for field,
// the call the checked one (to_gemm_args) gives: one translation.
void expect_same_call(const GemmArgs& x, const GemmArgs& y) {
  EXPECT_EQ(x.op_a, y.op_a);
  EXPECT_EQ(x.op_b, y.op_b);
  EXPECT_EQ(x.m, y.m);
  EXPECT_EQ(x.n, y.n);
  EXPECT_EQ(x.k, y.k);
  EXPECT_EQ(x.alpha, y.alpha);
  EXPECT_EQ(x.beta, y.beta);
  for (const auto& [p, q] : {std::pair{x.a, y.a},
                             {x.b, y.b},
                             {x.c, y.c},
                             {static_cast<const void*>(x.d), y.d},
                             {x.epilogue.bias, y.epilogue.bias},
                             {static_cast<const void*>(x.epilogue.bias_grad), y.epilogue.bias_grad},
                             {static_cast<const void*>(x.epilogue.aux), y.epilogue.aux}})
    EXPECT_EQ(p, q);
  for (const auto& [p, q] : {std::pair{x.a_dtype, y.a_dtype},
                             {x.b_dtype, y.b_dtype},
                             {x.c_dtype, y.c_dtype},
                             {x.d_dtype, y.d_dtype},
                             {x.epilogue.bias_dtype, y.epilogue.bias_dtype},
                             {x.epilogue.aux_dtype, y.epilogue.aux_dtype}})
    EXPECT_EQ(p, q);
  for (const auto& [p, q] : {std::pair{x.lda, y.lda},
                             {x.ldb, y.ldb},
                             {x.ldc, y.ldc},
                             {x.ldd, y.ldd},
                             {x.epilogue.aux_ld, y.epilogue.aux_ld}})
    EXPECT_EQ(p, q);
  EXPECT_EQ(x.epilogue.kind, y.epilogue.kind);
  EXPECT_EQ(x.epilogue.gelu, y.epilogue.gelu);
  EXPECT_EQ(x.epilogue.accumulate_bias_grad, y.epilogue.accumulate_bias_grad);
  EXPECT_EQ(x.fp16_mode, y.fp16_mode);
  EXPECT_EQ(x.device, y.device);
  EXPECT_EQ(x.device_index, y.device_index);
}

Stored stored(std::mt19937_64& rng, int64_t rows, int64_t cols, bool column_major, int64_t pad) {
  Stored s;
  s.rows = rows;
  s.cols = cols;
  s.column_major = column_major;
  s.ld = (column_major ? rows : cols) + pad;
  const int64_t outer = column_major ? cols : rows;
  s.buffer = Buffer(DType::f32, outer * s.ld);
  s.buffer.fill_normal(rng, 0.0, 1.0);
  if (column_major) {
    s.view = TensorView::column_major(s.buffer.data(), DType::f32, rows, cols, s.ld);
  } else {
    s.view = TensorView(s.buffer.data(), DType::f32, {rows, cols});
    s.view.strides[0] = s.ld;
  }
  return s;
}

TEST(GemmViews, RowMajorSemanticsAgainstADoubleReference) {
  const std::uint64_t seed = testing::fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  const Epilogue epilogues[] = {Epilogue::DEFAULT,     Epilogue::BIAS,   Epilogue::GELU_AUX_BIAS,
                                Epilogue::DGELU_BGRAD, Epilogue::BGRADA, Epilogue::BGRADB};
  for (Isa isa : testing::available_isas()) {
    testing::IsaScope scope(isa);
    for (Epilogue e : epilogues)
      for (int layout = 0; layout < 16; ++layout) {
        const Op op_a = layout & 1 ? Op::T : Op::N, op_b = layout & 2 ? Op::T : Op::N;
        const bool a_cm = layout & 4, b_cm = layout & 8;
        const int64_t M = 1 + static_cast<int64_t>(rng() % 40), N = 1 + static_cast<int64_t>(rng() % 40),
                      K = 1 + static_cast<int64_t>(rng() % 50);
        SCOPED_TRACE(std::string(epilogue_name(e)) + " layout " + std::to_string(layout) + " M N K " +
                     std::to_string(M) + " " + std::to_string(N) + " " + std::to_string(K) + " isa " +
                     std::string(isa_name(isa)));
        const Stored a = op_a == Op::N ? stored(rng, M, K, a_cm, 3) : stored(rng, K, M, a_cm, 3);
        const Stored b = op_b == Op::N ? stored(rng, K, N, b_cm, 1) : stored(rng, N, K, b_cm, 1);
        Stored d = stored(rng, M, N, false, 2), c = stored(rng, M, N, false, 0), aux = stored(rng, M, N, false, 1);
        Buffer bias(DType::f32, N), grad(DType::f32, e == Epilogue::BGRADA ? M : N);
        bias.fill_normal(rng, 0.0, 1.0);
        const auto opa = [&](int64_t i, int64_t k) { return op_a == Op::N ? a.get(i, k) : a.get(k, i); };
        const auto opb = [&](int64_t k, int64_t j) { return op_b == Op::N ? b.get(k, j) : b.get(j, k); };

        GemmViewArgs g;
        g.op_a = op_a;
        g.op_b = op_b;
        g.a = a.view;
        g.b = b.view;
        g.d = d.view;
        g.epilogue = e;
        const bool with_c = e == Epilogue::DEFAULT;
        if (with_c) {
          g.beta = 0.5f;
          g.c = c.view;
        }
        if (e == Epilogue::BIAS || e == Epilogue::GELU_AUX_BIAS) g.bias = TensorView(bias.data(), DType::f32, {N});
        if (e == Epilogue::GELU_AUX_BIAS || e == Epilogue::DGELU_BGRAD) g.aux = aux.view;
        if (e == Epilogue::DGELU_BGRAD || e == Epilogue::BGRADA || e == Epilogue::BGRADB)
          g.bias_grad = TensorView(grad.data(), DType::f32, {grad.size()});
        const Stored aux_in = aux;  // DGELU reads aux: keep its values
        ASSERT_EQ(gemm_check(g), "");
        expect_same_call(ops::column_major_gemm(g), to_gemm_args(g));
        gemm(g);

        // Tolerances from the library's derived bounds (ampkit/numerics/error_bounds.hpp).
        using namespace error_bounds;
        const GemmActivationBound act = e == Epilogue::GELU_AUX_BIAS ? GemmActivationBound::gelu
                                        : e == Epilogue::DGELU_BGRAD ? GemmActivationBound::dgelu
                                                                     : GemmActivationBound::none;
        std::vector<double> grad_ref(at(grad.size()), 0.0), grad_err(at(grad.size()), 0.0),
            grad_mag(at(grad.size()), 0.0);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double want = 0.0, s = 0.0;
            for (int64_t k = 0; k < K; ++k) {
              want += opa(i, k) * opb(k, j);
              s += std::fabs(opa(i, k) * opb(k, j));
            }
            if (with_c) {
              want += 0.5 * c.get(i, j);
              s += std::fabs(0.5 * c.get(i, j));
            }
            if (g.bias.present) {
              want += bias.get(j);
              s += std::fabs(bias.get(j));
            }
            const double pre_err = gemm_accumulation(K, s);
            if (e == Epilogue::GELU_AUX_BIAS) {
              EXPECT_NEAR(aux.get(i, j), want, gemm_output(pre_err, want, DType::f32, false))
                  << "aux " << i << "," << j;
              want = gelu_tanh(want);
            }
            const double x = aux_in.get(i, j);
            if (e == Epilogue::DGELU_BGRAD) want *= gelu_tanh_derivative(x);
            const double err = gemm_activation(act, pre_err, s, std::fabs(x));
            EXPECT_NEAR(d.get(i, j), want, gemm_output(err, want, DType::f32, false)) << "d " << i << "," << j;
            if (e == Epilogue::DGELU_BGRAD) {
              grad_ref[at(j)] += want;
              grad_err[at(j)] += err;
              grad_mag[at(j)] += std::fabs(want) + err;
            }
          }
        std::vector<double> grad_tol(at(grad.size()), 0.0);
        for (std::size_t q = 0; q < grad_tol.size(); ++q)
          grad_tol[q] = gemm_bias_grad_of_d(M, grad_err[q], grad_mag[q]);
        if (e == Epilogue::BGRADA || e == Epilogue::BGRADB) {
          for (int64_t q = 0; q < grad.size(); ++q) {
            double mag = 0.0;
            for (int64_t k = 0; k < K; ++k) {
              const double v = e == Epilogue::BGRADA ? opa(q, k) : opb(k, q);
              grad_ref[at(q)] += v;
              mag += std::fabs(v);
            }
            grad_tol[at(q)] = gemm_bias_grad_of_operand(K, mag);
          }
        }
        if (g.bias_grad.present) {
          for (int64_t q = 0; q < grad.size(); ++q)
            EXPECT_NEAR(grad.get(q), grad_ref[at(q)],
                        gemm_bias_grad_output(grad_tol[at(q)], 0.0, grad_ref[at(q)], DType::f32, false))
                << "bias_grad " << q;
        }
      }
  }
}

TEST(GemmViews, BadCallsNameTheViewAndWriteNothing) {
  std::vector<float> a(6 * 4, 1.0f), b(4 * 5, 1.0f), d(6 * 5, -7.0f), bias(5, 0.5f), aux(6 * 5, 0.0f);
  const auto good = [&] {
    GemmViewArgs g;
    g.a = TensorView(a.data(), DType::f32, {6, 4});
    g.b = TensorView(b.data(), DType::f32, {4, 5});
    g.d = TensorView(d.data(), DType::f32, {6, 5});
    g.epilogue = Epilogue::BIAS;
    g.bias = TensorView(bias.data(), DType::f32, {5});
    return g;
  };
  ASSERT_EQ(gemm_check(good()), "");
  struct Bad {
    const char* what;
    std::function<void(GemmViewArgs&)> mutate;
    const char* expect;  // a part of the message
  };
  const Bad bad[] = {
      {"a absent", [](GemmViewArgs& g) { g.a = TensorView(); }, "gemm: a must be given"},
      {"b of rank 1", [&](GemmViewArgs& g) { g.b = TensorView(b.data(), DType::f32, {20}); },
       "gemm: b must be a matrix (rank 2"},
      {"K mismatch",
       [&](GemmViewArgs& g) {
         g.b = TensorView(b.data(), DType::f32, {5, 4});
       },
       "gemm: op(b) must have K = 4 rows"},
      {"d shape",
       [&](GemmViewArgs& g) {
         g.d = TensorView(d.data(), DType::f32, {5, 6});
       },
       "gemm: d must have shape [M, N] = [6, 5]"},
      {"bias length M", [&](GemmViewArgs& g) { g.bias = TensorView(bias.data(), DType::f32, {4}); },
       "gemm: bias must have shape [N] = [5]"},
      {"bias with DEFAULT", [](GemmViewArgs& g) { g.epilogue = Epilogue::DEFAULT; },
       "gemm: bias must be absent: epilogue DEFAULT does not use it"},
      {"aux missing", [](GemmViewArgs& g) { g.epilogue = Epilogue::GELU_AUX_BIAS; }, "gemm: aux must be given"},
      {"beta without c", [](GemmViewArgs& g) { g.beta = 1.0f; }, "gemm: c must be given"},
      {"d column-major", [&](GemmViewArgs& g) { g.d = TensorView::column_major(d.data(), DType::f32, 6, 5, 6); },
       "gemm: d must be row-major"},
      {"d overlaps a",
       [&](GemmViewArgs& g) {
         g.a = TensorView(d.data(), DType::f32, {6, 4});
       },
       "gemm: d (output) must not overlap a"},
      {"bias dtype", [&](GemmViewArgs& g) { g.bias.dtype = DType::i32; }, "gemm: bias dtype must be d's (f32) or f32"},
      {"a on cuda", [&](GemmViewArgs& g) { g.a.device = Device::cuda; }, "gemm: a must be in the memory of d's device"},
      {"negative stride", [&](GemmViewArgs& g) { g.a.strides[0] = -4; }, "gemm: a strides must be >= 0"},
  };
  for (const Bad& c : bad) {
    SCOPED_TRACE(c.what);
    GemmViewArgs g = good();
    c.mutate(g);
    const std::string message = gemm_check(g);
    EXPECT_NE(message.find(c.expect), std::string::npos) << message;
    try {
      gemm(g);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(message, e.what());
    }
    for (float v : d) ASSERT_EQ(v, -7.0f) << "d was written";
  }
}

}  // namespace
}  // namespace ampkit
