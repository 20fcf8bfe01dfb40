// CPU-clock A/B timing of f32 GEMMs for loaded machines (bench layer): GFLOP/s per second of CPU
// time that the GEMM's threads ran, as a fraction of an AVX-512 FMA register loop timed the same
// way in the same run. Wall time on a machine shared with other builds moves ±30 % between runs;
// CPU time only counts when this process ran (the caches it shares still move it a little).
// Where hardware counters are available, `perf stat -e cycles:u` says the same more directly.
// Run: build/bench/gemm_cpu_clock_bench 4096x4096x1024,2048x3072x768 [reps] [threads]
//   D (m x n) = A (m x k) B (k x n), all column-major f32, DEFAULT epilogue; one line per shape:
//   median GFLOP/s over reps, its fraction of the peak (the mean of one measured before and one
//   after the shape), min, max, and a hash of D (the same bits for any blocking or thread count).
//   threads > 1: process CPU time, with OMP_WAIT_POLICY=passive so that waiting is not counted.
//   Alternate builds in rounds and take medians (docs/PERFORMANCE.md, "the f32 micro-kernel").
#include <immintrin.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/ops/gemm.hpp"

namespace {

int g_threads = 1;

double cpu_seconds() {
  timespec t;
  clock_gettime(g_threads > 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// 16 independent chains of vfmadd231ps zmm (latency 4 x 2 pipes needs >= 8).
__attribute__((noinline, target("avx512f"))) float fma_loop(std::int64_t iterations) {
  __m512 acc[16];
  const __m512 scale = _mm512_set1_ps(0.999f), add = _mm512_set1_ps(0.001f);
  for (int c = 0; c < 16; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c));
  for (std::int64_t i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int c = 0; c < 16; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, add);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < 16; ++c) sum = _mm512_add_ps(sum, acc[c]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0.0f;
  for (float x : lanes) total += x;
  return total;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One core's FMA peak in GFLOP/s of thread CPU time (median of 7 loops of ~10 ms).
double fma_peak() {
  std::vector<double> rates;
  const std::int64_t iterations = 2000000;
  volatile float sink = 0.0f;
  for (int r = 0; r < 7; ++r) {
    timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    sink = sink + fma_loop(iterations);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    const double s = static_cast<double>(t1.tv_sec - t0.tv_sec) + 1e-9 * static_cast<double>(t1.tv_nsec - t0.tv_nsec);
    rates.push_back(static_cast<double>(iterations) * 16.0 * 32.0 / s / 1e9);
  }
  return median(rates);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !ampkit::cpu_features().avx512) {
    std::fprintf(stderr, "usage: %s MxNxK[,MxNxK...] [reps] [threads] (needs AVX-512)\n", argv[0]);
    return 1;
  }
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  g_threads = argc > 3 ? std::max(1, std::atoi(argv[3])) : 1;
  ampkit::set_num_threads(g_threads);
  const std::string shapes = argv[1];
  for (std::size_t at = 0; at < shapes.size();) {
    std::size_t end = shapes.find(',', at);
    if (end == std::string::npos) end = shapes.size();
    long long m = 0, n = 0, k = 0;
    if (std::sscanf(shapes.substr(at, end - at).c_str(), "%lldx%lldx%lld", &m, &n, &k) != 3 || m < 1 || n < 1 ||
        k < 1) {
      std::fprintf(stderr, "bad shape '%s' (expected MxNxK)\n", shapes.substr(at, end - at).c_str());
      return 1;
    }
    at = end + 1;
    std::vector<float> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n)),
        d(static_cast<std::size_t>(m * n));
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
    ampkit::GemmArgs g;
    g.m = m, g.n = n, g.k = k;
    g.a = a.data(), g.lda = m, g.b = b.data(), g.ldb = k, g.d = d.data(), g.ldd = m;
    const double peak_before = fma_peak();
    ampkit::gemm(g);  // warm-up: workspace pages, caches
    std::vector<double> rates;
    for (int r = 0; r < reps; ++r) {
      const double t0 = cpu_seconds();
      ampkit::gemm(g);
      rates.push_back(2.0 * static_cast<double>(m * n * k) / (cpu_seconds() - t0) / 1e9);
    }
    const double peak = (peak_before + fma_peak()) / 2.0;
    std::uint32_t hash = 0;
    for (float x : d) {
      std::uint32_t bits;
      std::memcpy(&bits, &x, 4);
      hash = hash * 31u + bits;
    }
    std::printf("%lldx%lldx%lld %.1f GFLOP/s (%.3f of peak %.1f) min %.1f max %.1f hash %08x\n", m, n, k, median(rates),
                median(rates) / peak, peak, *std::min_element(rates.begin(), rates.end()),
                *std::max_element(rates.begin(), rates.end()), hash);
  }
  return 0;
}
