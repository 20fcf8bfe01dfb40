// The elementwise kernel (kernels layer): out = a + b or out = alpha * a in fp32, one rounding
// per output, each dtype a template parameter (visit_dtype). OpenMP over tiles of at most
// kTile elements of one row; every element is computed the same way whatever the thread count.
// Called through elementwise_kernels() by src/ops/elementwise/elementwise_front_end.cpp.
#include <algorithm>

#include "ampkit/core/threading.hpp"
#include "cpu/elementwise/element_io.hpp"
#include "cpu/elementwise/elementwise_kernels.hpp"

namespace ampkit::cpu {
namespace {

constexpr std::int64_t kTile = 4096;
constexpr std::int64_t kParallelMinElements = 1 << 15;

// a, b, out: [rows, n]; one tile = columns [c0, c1) of row r.
template <DType A, DType B, DType O, bool kAdd>
void run_tiles(const ops::ElementwiseProblem& p) {
  const std::int64_t tiles_per_row = (p.n + kTile - 1) / kTile;
  const std::int64_t tiles = p.rows * tiles_per_row;
  const bool parallel = p.rows * p.n >= kParallelMinElements && tiles > 1;
#pragma omp parallel for schedule(static) num_threads(ampkit::num_threads()) if (parallel)
  for (std::int64_t t = 0; t < tiles; ++t) {
    const std::int64_t r = t / tiles_per_row;
    const std::int64_t c0 = (t % tiles_per_row) * kTile;
    const std::int64_t c1 = std::min(p.n, c0 + kTile);
    const void* a = row_address(p.a.data, A, p.a.row_stride, r);
    void* out = row_address(p.out, O, p.out_row_stride, r);
    if constexpr (kAdd) {
      const void* b = row_address(p.b.data, B, p.b.row_stride, r);
      for (std::int64_t j = c0; j < c1; ++j) store_as<O>(out, j, load_as<A>(a, j) + load_as<B>(b, j));
    } else {
      const float alpha = p.alpha;
      for (std::int64_t j = c0; j < c1; ++j) store_as<O>(out, j, alpha * load_as<A>(a, j));
    }
  }
}

}  // namespace

void elementwise_cpu(const ops::ElementwiseProblem& p) {
  const bool add = p.b.data != nullptr;
  visit_dtype(p.a.dtype, [&]<DType A>() {
    visit_dtype(add ? p.b.dtype : DType::f32, [&]<DType B>() {
      visit_dtype(p.out_dtype, [&]<DType O>() {
        if (add)
          run_tiles<A, B, O, true>(p);
        else
          run_tiles<A, B, O, false>(p);
      });
    });
  });
}

}  // namespace ampkit::cpu
