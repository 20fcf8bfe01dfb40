// Quick A/B benchmark of ampkit::gemm (Google Benchmark): GFLOP/s of bf16 / f32 / f16-alt GEMMs
// with and without fused epilogues, 1 or 2 threads. Buffers are allocated and warmed once.
// Run: flock /tmp/ampkit-bench.lock build/bench/gemm_bench --benchmark_filter=...
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ampkit/core/float16.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/ops/gemm.hpp"

namespace {

using ampkit::DType;

std::vector<std::uint16_t> random_16(std::int64_t n, DType t) {
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<std::uint16_t> v(static_cast<std::size_t>(n));
  for (auto& x : v)
    x = t == DType::bf16 ? ampkit::float_to_bf16_bits(dist(rng)) : ampkit::float_to_half_bits(dist(rng));
  return v;
}

// args: dtype (0 f32, 1 bf16, 2 f16 alt), epilogue, threads, m, n, k
void BM_gemm(benchmark::State& state) {
  const int type = static_cast<int>(state.range(0));
  const auto kind = static_cast<ampkit::Epilogue>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  const std::int64_t m = state.range(3), n = state.range(4), k = state.range(5);
  const DType t = type == 0 ? DType::f32 : type == 1 ? DType::bf16 : DType::f16;
  ampkit::set_num_threads(threads);
  std::vector<float> af, bf;
  std::vector<std::uint16_t> ah, bh;
  if (t == DType::f32) {
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    af.resize(static_cast<std::size_t>(m * k)), bf.resize(static_cast<std::size_t>(k * n));
    for (auto& x : af) x = dist(rng);
    for (auto& x : bf) x = dist(rng);
  } else {
    ah = random_16(m * k, t), bh = random_16(k * n, t);
  }
  std::vector<unsigned char> d(static_cast<std::size_t>(m * n) * ampkit::dtype_size(t));
  std::vector<unsigned char> aux(static_cast<std::size_t>(m * n) * ampkit::dtype_size(t));
  std::vector<float> bias(static_cast<std::size_t>(m), 0.1f), bias_grad(static_cast<std::size_t>(n > m ? n : m));
  ampkit::GemmArgs g;
  g.op_a = ampkit::Op::T, g.op_b = ampkit::Op::N;  // the Linear forward: A = W (T), B = X (N)
  g.m = m, g.n = n, g.k = k;
  g.a = t == DType::f32 ? static_cast<const void*>(af.data()) : ah.data(), g.a_dtype = t, g.lda = k;
  g.b = t == DType::f32 ? static_cast<const void*>(bf.data()) : bh.data(), g.b_dtype = t, g.ldb = k;
  g.d = d.data(), g.d_dtype = t, g.ldd = m;
  g.fp16_mode = ampkit::Fp16Mode::alt;
  g.epilogue.kind = kind;
  const bool bias_form = kind == ampkit::Epilogue::BIAS || kind == ampkit::Epilogue::GELU_AUX_BIAS;
  if (bias_form) g.epilogue.bias = bias.data();
  if (kind == ampkit::Epilogue::GELU_AUX_BIAS || kind == ampkit::Epilogue::DGELU_BGRAD) {
    g.epilogue.aux = aux.data(), g.epilogue.aux_dtype = t, g.epilogue.aux_ld = m;
  }
  if (kind == ampkit::Epilogue::DGELU_BGRAD || kind == ampkit::Epilogue::BGRADB)
    g.epilogue.bias_grad = bias_grad.data();
  ampkit::GemmReport report;
  ampkit::gemm(g, &report);  // warm-up: workspace pages, caches
  for (auto _ : state) ampkit::gemm(g);
  state.SetLabel(report.kernel);
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(m * n * k), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int type : {1, 0, 2})
    for (int kind : {0, 9, 11})  // DEFAULT, GELU_AUX_BIAS, DGELU_BGRAD
      for (int threads : {1, 2}) b->Args({type, kind, threads, 4096, 4096, 1024});
  for (int type : {1, 0})
    for (int threads : {1, 2}) {
      b->Args({type, 0, threads, 1024, 1024, 1024});
      b->Args({type, 0, threads, 512, 4096, 512});
      b->Args({type, 0, threads, 4096, 1, 4096});
      b->Args({type, 0, threads, 16, 4096, 1});
    }
}

BENCHMARK(BM_gemm)
    ->Apply(shapes)
    ->ArgNames({"type", "epi", "thr", "m", "n", "k"})
    ->UseRealTime()
    ->MinTime(0.5)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
