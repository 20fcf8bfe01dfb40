// Quick A/B benchmark of the Linear layer's passes (Google Benchmark): forward with bias + GELU
// (saving aux), backward dx fused with the layer below's GELU and bias gradients, backward dw
// with db, for an MLP-up shape (batch 2048, 768 -> 3072), bf16 or f32, 1 or 2 threads.
// `ampkit bench linear` is the reporting tool (peaks, peers); this is for quick A/B runs:
//   flock /tmp/ampkit-bench.lock build/bench/linear_bench --benchmark_filter=...
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ampkit/core/float16.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/layers/linear.hpp"

namespace {

using ampkit::DType;

// Random values of dtype t (stored in 4 bytes per element so one vector serves every dtype).
std::vector<float> random_values(std::int64_t n, DType t, float scale) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<std::size_t>(n));
  auto* half = reinterpret_cast<std::uint16_t*>(v.data());
  for (std::int64_t i = 0; i < n; ++i) {
    const float x = dist(rng);
    if (t == DType::f32)
      v[static_cast<std::size_t>(i)] = x;
    else
      half[i] = t == DType::bf16 ? ampkit::float_to_bf16_bits(x) : ampkit::float_to_half_bits(x);
  }
  return v;
}

// args: pass (0 forward+gelu, 1 dx with DGELU_BGRAD, 2 dw with BGRADB), dtype (0 f32, 1 bf16),
// threads, batch, in, out
void BM_linear(benchmark::State& state) {
  const int pass = static_cast<int>(state.range(0));
  const DType t = state.range(1) == 0 ? DType::f32 : DType::bf16;
  ampkit::set_num_threads(static_cast<int>(state.range(2)));
  const std::int64_t batch = state.range(3), in = state.range(4), out = state.range(5);
  std::vector<float> x = random_values(batch * in, t, 1.0f), w = random_values(out * in, t, 0.05f),
                     dy = random_values(batch * out, t, 1.0f), below_aux = random_values(batch * in, t, 2.0f);
  std::vector<float> bias(static_cast<std::size_t>(out), 0.1f), y(static_cast<std::size_t>(batch * out)),
      aux(static_cast<std::size_t>(batch * out)), dx(static_cast<std::size_t>(batch * in)),
      dw(static_cast<std::size_t>(out * in)), db(static_cast<std::size_t>(out)), below_db(static_cast<std::size_t>(in));
  ampkit::LinearForwardArgs f;
  using ampkit::TensorView;
  f.x = TensorView(x.data(), t, {batch, in}), f.w = TensorView(w.data(), t, {out, in});
  f.bias = TensorView(bias.data(), DType::f32, {out});
  f.y = TensorView(y.data(), t, {batch, out}), f.gelu = true;
  f.aux = TensorView(aux.data(), t, {batch, out});
  ampkit::LinearBackwardArgs g;
  g.dy = TensorView(dy.data(), t, {batch, out}), g.x = f.x, g.w = f.w;
  if (pass == 1) {
    g.dx = TensorView(dx.data(), t, {batch, in}), g.below_gelu = true;
    g.below_aux = TensorView(below_aux.data(), t, {batch, in});
    g.below_db = TensorView(below_db.data(), DType::f32, {in});
  } else {
    g.dw = TensorView(dw.data(), t, {out, in}), g.db = TensorView(db.data(), DType::f32, {out});
  }
  for (auto _ : state) {
    if (pass == 0)
      ampkit::linear_forward(f);
    else
      ampkit::linear_backward(g);
  }
  const double flops = 2.0 * static_cast<double>(batch * in * out);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_linear)
    ->ArgNames({"pass", "bf16", "threads", "batch", "in", "out"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {1, 2}, {2048}, {768}, {3072}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
