// Google Benchmark program for quick A/B work on the LayerNorm/RMSNorm kernels (bench layer).
// Names: <op>_<pass>/<dtype>/<rows>x<n>, e.g. layer_norm_bwd/mixed/16384x1024; pick some with
// --benchmark_filter. Threads: OMP_NUM_THREADS (ampkit's default). Bytes/s counts the bytes that
// must move, as `ampkit bench norm` does (docs/PERFORMANCE.md); that command is the one that
// reports ratios to the copy bandwidth and to oneDNN.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ampkit/ops/convert.hpp"
#include "ampkit/ops/norm.hpp"

namespace {

struct Mix {
  const char* name;
  ampkit::DType x;
  ampkit::DType param;
};

constexpr Mix kMixes[] = {{"f32", ampkit::DType::f32, ampkit::DType::f32},
                          {"bf16", ampkit::DType::bf16, ampkit::DType::bf16},
                          {"mixed", ampkit::DType::bf16, ampkit::DType::f32}};
// [rows, n]: a small PyTorch shape (32x8x16), its 64x128x56x56 shape, transformer shapes.
constexpr std::int64_t kShapes[][2] = {{256, 16}, {458752, 56}, {16384, 1024}, {8192, 4096}};

/// A 64-byte-aligned buffer, pre-touched once so no page fault is timed.
struct Buffer {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data;
  Buffer(std::size_t bytes, ampkit::DType type, std::size_t count, float value)
      : data(std::aligned_alloc(64, (bytes + 63) / 64 * 64)) {
    if (!data) throw std::bad_alloc();
    std::vector<float> v(count);
    for (std::size_t i = 0; i < count; ++i)  // a cheap varied pattern around `value`
      v[i] = value + 0.125f * static_cast<float>(static_cast<int>(i * 2654435761u % 17) - 8);
    ampkit::convert(v.data(), ampkit::DType::f32, data.get(), type, static_cast<std::int64_t>(count));
  }
  void* get() const { return data.get(); }
};

void run(benchmark::State& state, bool rms, bool backward, Mix mix, std::int64_t rows, std::int64_t n) {
  const auto elements = static_cast<std::size_t>(rows * n);
  const std::size_t sx = ampkit::dtype_size(mix.x), sp = ampkit::dtype_size(mix.param);
  const auto un = static_cast<std::size_t>(n), urows = static_cast<std::size_t>(rows);
  Buffer x(elements * sx, mix.x, elements, 1.5f), dy(elements * sx, mix.x, elements, 0.0f);
  Buffer y(elements * sx, mix.x, elements, 0.0f), dx(elements * sx, mix.x, elements, 0.0f);
  Buffer gamma(un * sp, mix.param, un, 1.0f), beta(un * sp, mix.param, un, 0.0f);
  Buffer dgamma(un * sp, mix.param, un, 0.0f), dbeta(un * sp, mix.param, un, 0.0f);
  std::vector<float> mean(urows), rstd(urows);

  using ampkit::TensorView;
  ampkit::NormForwardArgs f;
  f.x = TensorView(x.get(), mix.x, {rows, n});
  f.gamma = TensorView(gamma.get(), mix.param, {n});
  if (!rms) f.beta = TensorView(beta.get(), mix.param, {n});
  f.y = TensorView(y.get(), mix.x, {rows, n});
  if (!rms) f.mean = TensorView(mean.data(), ampkit::DType::f32, {rows});
  f.rstd = TensorView(rstd.data(), ampkit::DType::f32, {rows});
  ampkit::NormBackwardArgs b;
  b.dy = TensorView(dy.get(), mix.x, {rows, n});
  b.x = f.x;
  b.mean = f.mean;
  b.rstd = f.rstd;
  b.gamma = f.gamma;
  b.dx = TensorView(dx.get(), mix.x, {rows, n});
  b.dgamma = TensorView(dgamma.get(), mix.param, {n});
  if (!rms) b.dbeta = TensorView(dbeta.get(), mix.param, {n});

  rms ? ampkit::rms_norm_forward(f) : ampkit::layer_norm_forward(f);  // statistics, warm-up
  for (auto _ : state) {
    if (backward)
      rms ? ampkit::rms_norm_backward(b) : ampkit::layer_norm_backward(b);
    else
      rms ? ampkit::rms_norm_forward(f) : ampkit::layer_norm_forward(f);
    benchmark::ClobberMemory();
  }
  // Bytes that must move: [rows, n] tensors (x, y / x, dy, dx), params, f32 statistics.
  const std::size_t stats = rms ? 1 : 2;
  const std::size_t bytes =
      (backward ? 3 : 2) * elements * sx + (backward ? 1 + stats : stats) * un * sp + stats * urows * 4;
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  const ampkit::NormKind kind = rms ? ampkit::NormKind::rms : ampkit::NormKind::layer;
  state.SetLabel(backward ? ampkit::norm_kernel_name(kind, b) : ampkit::norm_kernel_name(kind, f));
}

}  // namespace

int main(int argc, char** argv) {
  for (const bool rms : {false, true})
    for (const bool backward : {false, true})
      for (const Mix& mix : kMixes)
        for (const auto& shape : kShapes) {
          const std::string name = std::string(rms ? "rms_norm" : "layer_norm") + (backward ? "_bwd/" : "_fwd/") +
                                   mix.name + "/" + std::to_string(shape[0]) + "x" + std::to_string(shape[1]);
          benchmark::RegisterBenchmark(name.c_str(), run, rms, backward, mix, shape[0], shape[1])
              ->UseRealTime()
              ->Unit(benchmark::kMicrosecond);
        }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
