// OpenBLAS sgemm as a benchmark peer in a process of its own: the helper program
// ampkit_openblas_peer (tools layer, bench/peers/; benchmarks only, built only when OpenBLAS is
// found). openblas_peer.cpp, for `ampkit bench gemm` / `bench linear`, spawns it with
// OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed from its environment and OPENBLAS_NUM_THREADS
// set, so OpenBLAS's threads and settings never touch the ampkit process (docs/PERFORMANCE.md,
// "Peers").
//   ampkit_openblas_peer --shapes 4096x4096x1024,1x4096x4096 --threads 2 [--op nn|tn|nt|tt]
//                        [--reps 5] [--min-ms 200]
// prints one JSON line per shape: median ms and GFLOP/s (2mnk) of column-major
// C (m x n) = op(A) (m x k) * op(B) (k x n), buffers allocated and touched once, warmed up.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Shape {
  long m, n, k;
};

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "ampkit_openblas_peer: %s\nusage: ampkit_openblas_peer --shapes MxNxK[,...] "
               "--threads T [--op nn|tn|nt|tt] [--reps R] [--min-ms MS]\n",
               message);
  std::exit(2);
}

long parse_long(const std::string& text, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1) usage((std::string("bad ") + what + " '" + text + "'").c_str());
  return v;
}

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const std::size_t x1 = item.find('x'), x2 = item.find('x', x1 == std::string::npos ? 0 : x1 + 1);
    if (x1 == std::string::npos || x2 == std::string::npos) usage(("bad shape '" + item + "'").c_str());
    shapes.push_back({parse_long(item.substr(0, x1), "m"), parse_long(item.substr(x1 + 1, x2 - x1 - 1), "n"),
                      parse_long(item.substr(x2 + 1), "k")});
    start = comma + 1;
  }
  return shapes;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  long threads = 1, reps = 5;
  double min_ms = 200.0;
  std::string op = "nn";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    const std::string value = argv[++i];
    if (arg == "--shapes")
      shapes = parse_shapes(value);
    else if (arg == "--threads")
      threads = parse_long(value, "thread count");
    else if (arg == "--reps")
      reps = parse_long(value, "rep count");
    else if (arg == "--min-ms")
      min_ms = static_cast<double>(parse_long(value, "min-ms"));
    else if (arg == "--op")
      op = value;
    else
      usage(("unknown option " + arg).c_str());
  }
  if (shapes.empty()) usage("--shapes is required");
  if (op != "nn" && op != "tn" && op != "nt" && op != "tt") usage(("bad --op '" + op + "'").c_str());
  openblas_set_num_threads(static_cast<int>(threads));
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const bool ta = op[0] == 't', tb = op[1] == 't';

  for (const Shape& s : shapes) {
    // op(A) m x k: stored m x k (lda m) or k x m (lda k); op(B) k x n likewise.
    std::vector<float> a(static_cast<std::size_t>(s.m * s.k)), b(static_cast<std::size_t>(s.k * s.n)),
        c(static_cast<std::size_t>(s.m * s.n));
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.1f;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.1f;
    const long lda = ta ? s.k : s.m, ldb = tb ? s.n : s.k;
    auto call = [&] {
      cblas_sgemm(CblasColMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(s.m),
                  static_cast<int>(s.n), static_cast<int>(s.k), 1.0f, a.data(), static_cast<int>(lda), b.data(),
                  static_cast<int>(ldb), 0.0f, c.data(), static_cast<int>(s.m));
    };
    call();
    call();
    // Calls per sample so that a sample lasts >= 1 ms.
    long per_sample = 1;
    for (;;) {
      const double t0 = now_ms();
      for (long i = 0; i < per_sample; ++i) call();
      const double ms = now_ms() - t0;
      if (ms >= 1.0 || per_sample >= (1L << 20)) break;
      per_sample *= 4;
    }
    std::vector<double> times;
    double total = 0.0;
    while (static_cast<long>(times.size()) < reps || (total < min_ms && times.size() < 1000)) {
      const double t0 = now_ms();
      for (long i = 0; i < per_sample; ++i) call();
      const double ms = now_ms() - t0;
      total += ms;
      times.push_back(ms / static_cast<double>(per_sample));
    }
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    const double median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    const double gflops =
        2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / (median * 1e6);
    std::printf(
        "{\"peer\":\"openblas_sgemm\",\"m\":%ld,\"n\":%ld,\"k\":%ld,\"op\":\"%s\",\"threads\":%ld,"
        "\"ms\":%.6g,\"gflops\":%.6g,\"samples\":%zu,\"openblas_coretype\":\"%s\","
        "\"openblas_core\":\"%s\"}\n",
        s.m, s.n, s.k, op.c_str(), threads, median, gflops, n, coretype ? coretype : "unset", openblas_get_corename());
    std::fflush(stdout);
  }
  return 0;
}
