// The GELU kernel (kernels layer): forward gelu(x) and backward dy * gelu'(x) with the GEMM
// epilogue's fp32 math (cpu/math/gelu_math.hpp, so fused and unfused graphs agree), one rounding
// per output, dtypes as template parameters. OpenMP over tiles of one row; elementwise, so the
// bits never depend on the thread count. Called through gelu_kernels() by the activation front end.
#include <algorithm>

#include "ampkit/core/threading.hpp"
#include "cpu/activation/activation_kernels.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "cpu/math/gelu_math.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kTile = 2048;
constexpr std::int64_t kParallelMinElements = 1 << 13;

template <GeluVariant V>
inline float gelu_value(float x) {
  return V == GeluVariant::tanh ? gemm_math::gelu_tanh(x) : gemm_math::gelu_erf(x);
}
template <GeluVariant V>
inline float gelu_slope(float x) {
  return V == GeluVariant::tanh ? gemm_math::gelu_tanh_derivative(x) : gemm_math::gelu_erf_derivative(x);
}

// x, dy, out: [rows, n]; one tile = columns [c0, c1) of row r.
template <GeluVariant V, DType X, DType D, DType O>
void gelu_tiles(const ops::GeluProblem& p) {
  const std::int64_t tiles_per_row = (p.n + kTile - 1) / kTile;
  const std::int64_t tiles = p.rows * tiles_per_row;
  const bool parallel = p.rows * p.n >= kParallelMinElements && tiles > 1;
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (parallel)
  for (std::int64_t t = 0; t < tiles; ++t) {
    const std::int64_t r = t / tiles_per_row;
    const std::int64_t c0 = (t % tiles_per_row) * kTile;
    const std::int64_t c1 = std::min(p.n, c0 + kTile);
    const void* x = row_address(p.x, X, p.x_row_stride, r);
    void* out = row_address(p.out, O, p.out_row_stride, r);
    if (p.backward) {
      const void* dy = row_address(p.dy, D, p.dy_row_stride, r);
      for (std::int64_t j = c0; j < c1; ++j) store_as<O>(out, j, load_as<D>(dy, j) * gelu_slope<V>(load_as<X>(x, j)));
    } else {
      for (std::int64_t j = c0; j < c1; ++j) store_as<O>(out, j, gelu_value<V>(load_as<X>(x, j)));
    }
  }
}

template <GeluVariant V>
void gelu_variant(const ops::GeluProblem& p) {
  visit_dtype(p.x_dtype, [&]<DType X>() {
    visit_dtype(p.backward ? p.dy_dtype : DType::f32,
                [&]<DType D>() { visit_dtype(p.out_dtype, [&]<DType O>() { gelu_tiles<V, X, D, O>(p); }); });
  });
}

}  // namespace

void gelu_cpu(const ops::GeluProblem& p) {
  if (p.variant == GeluVariant::tanh)
    gelu_variant<GeluVariant::tanh>(p);
  else
    gelu_variant<GeluVariant::erf>(p);
}

}  // namespace ampkit::cpu
