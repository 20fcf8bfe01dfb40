// `ampkit bench norm` (tools layer): times LayerNorm and RMSNorm forward and backward over the
// shapes of PyTorch's mixed-LayerNorm work and transformer shapes, every dtype mix, 1 and 2
// threads; reports GB/s of the bytes that must move, the fraction of the copy bandwidth measured
// in the same run, and oneDNN's layer normalization as the peer (ratio = peer_ms / ms, > 1 means
// ampkit is faster). Byte conventions: docs/PERFORMANCE.md. Uses bench_util.hpp.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/ops/convert.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/core/error.hpp"
#include "ampkit/ops/norm.hpp"
#include "ampkit/core/threading.hpp"
#include "tools/ampkit/bench_util.hpp"
#include "tools/ampkit/commands.hpp"
#include "tools/ampkit/peer_onednn_norm.hpp"

namespace ampkit::tools {
namespace {

using bench::AlignedBuffer;
using bench::JsonLine;
using bench::Measurement;
using bench::MeasureOptions;

constexpr const char* kCommand = "bench norm";
constexpr float kEps = 1e-5f;

constexpr const char* kUsage =
    "usage: ampkit bench norm [options]\n"
    "  --op layer_norm|rms_norm|all     (default all)\n"
    "  --pass forward|backward|all      (default all)\n"
    "  --dtype LIST   of f32, bf16, mixed (bf16 x, f32 params), f16, mixed_f16 (f16 x, f32\n"
    "                 params), or all   (default f32,bf16,mixed)\n"
    "  --shapes LIST  e.g. 64x128x56x56,16384x1024: normalized over the last dim\n"
    "                 (default: 1x8x16, 8x8x16, 32x8x16, 64x128x56x56, 64x128x256x256,\n"
    "                 16384x1024, 8192x4096, 4096x12288)\n"
    "  --threads 1,2  thread counts (default 1,2)\n"
    "  --reps N       minimum timed samples per case\n"
    "  --quick        a small subset with short timing, for a smoke run\n"
    "  --no-peer      skip oneDNN\n"
    "  --json         one JSON object per line and case instead of a table\n"
    "time = median per call, best = fastest sample; GB/s (of the median) counts the bytes that\n"
    "must move (docs/PERFORMANCE.md); x copy = that rate over the\n"
    "copy bandwidth measured in this run with the same thread count; ratio = oneDNN ms / ampkit\n"
    "ms (> 1: ampkit faster).\n";

enum class Op { layer_norm, rms_norm };
enum class Pass { forward, backward };

const char* op_name(Op op) { return op == Op::layer_norm ? "layer_norm" : "rms_norm"; }
const char* pass_name(Pass p) { return p == Pass::forward ? "forward" : "backward"; }

struct Shape {
  std::vector<std::int64_t> dims;
  std::int64_t rows = 1;  // product of the leading dims
  std::int64_t n = 1;     // the last dim
  std::string text;       // "64x128x56x56"
  std::int64_t elements() const { return rows * n; }
};

struct DtypeMix {
  std::string name;  // f32, bf16, mixed, f16, mixed_f16
  DType x;           // x, y, dy, dx
  DType param;       // gamma, beta, dgamma, dbeta
};

Shape parse_shape(const std::string& text) {
  Shape s;
  s.text = text;
  for (const std::string& d : bench::split_list(text, 'x'))
    s.dims.push_back(bench::parse_int(d, kCommand, "--shapes (each dim)", 1, std::int64_t{1} << 40));
  if (s.dims.empty()) fail(kCommand, "--shapes expects items like 64x128x56x56, but got '", text, "'");
  s.n = s.dims.back();
  s.rows = 1;
  for (std::size_t i = 0; i + 1 < s.dims.size(); ++i) s.rows *= s.dims[i];
  if (s.rows > (std::int64_t{1} << 36) / s.n)
    fail(kCommand, "--shapes: ", text, " has ", s.rows, " x ", s.n,
         " elements; expected at most 2^36");
  return s;
}

DtypeMix parse_dtype_mix(const std::string& name) {
  if (name == "f32") return {name, DType::f32, DType::f32};
  if (name == "bf16") return {name, DType::bf16, DType::bf16};
  if (name == "mixed") return {name, DType::bf16, DType::f32};
  if (name == "f16") return {name, DType::f16, DType::f16};
  if (name == "mixed_f16") return {name, DType::f16, DType::f32};
  fail(kCommand, "--dtype expects f32, bf16, mixed, f16, mixed_f16 or all, but got '", name, "'");
}

/// Bytes that must move for one call (docs/PERFORMANCE.md, "bytes counted"):
///   forward:  read x, write y ([rows, n] each, x's dtype); read gamma (and beta for LayerNorm)
///             ([n], param dtype); write rstd (and mean for LayerNorm) ([rows], f32).
///   backward: read x and dy, write dx ([rows, n] each); read rstd (and mean) ([rows], f32);
///             read gamma; write dgamma (and dbeta) ([n], param dtype).
std::int64_t bytes_moved(Op op, Pass pass, const Shape& s, const DtypeMix& d) {
  const auto sx = static_cast<std::int64_t>(dtype_size(d.x));
  const auto sp = static_cast<std::int64_t>(dtype_size(d.param));
  const std::int64_t tensors = pass == Pass::forward ? 2 : 3;
  const std::int64_t stats = op == Op::layer_norm ? 2 : 1;
  const std::int64_t params = pass == Pass::forward ? stats : 1 + stats;
  return tensors * s.elements() * sx + params * s.n * sp + stats * s.rows * 4;
}

/// Fills dst (n elements of `type`) with offset + scale * u, u uniform in [-1, 1) from a hash of
/// (seed, index): deterministic, parallel, rounded once by ampkit::convert.
void fill(void* dst, DType type, std::int64_t n, std::uint64_t seed, float offset, float scale,
          int threads) {
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    float values[kChunk];
    const std::int64_t begin = c * kChunk, count = std::min(kChunk, n - begin);
    for (std::int64_t i = 0; i < count; ++i) {
      std::uint64_t z = seed + static_cast<std::uint64_t>(begin + i) * 0x9e3779b97f4a7c15ull;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      z ^= z >> 31;
      const float u = static_cast<float>(z >> 40) * 0x1p-23f - 1.0f;
      values[i] = offset + scale * u;
    }
    convert(values, DType::f32, static_cast<unsigned char*>(dst) + begin * dtype_size(type), type,
            count);
  }
}

std::string format_time(double ms) {
  char buf[32];
  if (ms < 1.0) std::snprintf(buf, sizeof buf, "%.2f us", ms * 1e3);
  else std::snprintf(buf, sizeof buf, "%.2f ms", ms);
  return buf;
}

/// Every buffer of the run, allocated once for the largest case and reused by every case.
struct Buffers {
  AlignedBuffer x, y, dy, dx;                    // [rows, n]
  AlignedBuffer gamma, beta, dgamma, dbeta;      // [n]
  AlignedBuffer mean, rstd, peer_mean, peer_var; // [rows] f32
};

/// One measured case, as printed.
struct Row {
  Op op;
  Pass pass;
  const Shape* shape;
  const DtypeMix* dtype;
  int threads;
  Measurement ampkit;
  std::int64_t bytes;
  double copy_gbps;
  std::string kernel;
  std::optional<Measurement> peer;
  std::string peer_note;  // why there is no peer figure
  std::string peer_impl;
  std::string error;      // an ampkit::Error the kernel threw
};

double gbps(const Row& r) { return static_cast<double>(r.bytes) / (r.ampkit.median_ms * 1e-3) / 1e9; }

void print_json(const Row& r) {
  JsonLine j;
  j.add("op", op_name(r.op)).add("pass", pass_name(r.pass)).add("shape", r.shape->dims);
  j.add("rows", r.shape->rows).add("n", r.shape->n).add("dtype", r.dtype->name);
  j.add("x_dtype", dtype_name(r.dtype->x)).add("param_dtype", dtype_name(r.dtype->param));
  j.add("threads", r.threads).add("isa", isa_name(active_isa()));
  if (!r.error.empty()) {
    j.add("error", r.error);
    std::printf("%s\n", j.str().c_str());
    return;
  }
  j.add("kernel", r.kernel).add("ms", r.ampkit.median_ms).add("min_ms", r.ampkit.min_ms);
  j.add("samples", r.ampkit.samples).add("bytes", r.bytes).add("gbps", gbps(r));
  j.add("copy_gbps", r.copy_gbps).add("fraction_of_copy", gbps(r) / r.copy_gbps);
  if (r.peer) {
    j.add("peer", "onednn").add("peer_ms", r.peer->median_ms);
    j.add("ratio_to_peer", r.peer->median_ms / r.ampkit.median_ms).add("peer_impl", r.peer_impl);
  } else {
    j.add_null("peer").add_null("peer_ms").add_null("ratio_to_peer").add("peer_note", r.peer_note);
  }
  std::printf("%s\n", j.str().c_str());
  std::fflush(stdout);
}

void print_table_header() {
  std::printf("%-10s %-8s %-16s %-9s %3s %10s %10s %7s %6s %10s %6s  %s\n", "op", "pass",
              "shape", "dtype", "thr", "time", "best", "GB/s", "x copy", "oneDNN", "ratio",
              "kernel / peer note");
}

void print_table_row(const Row& r) {
  std::printf("%-10s %-8s %-16s %-9s %3d ", op_name(r.op), pass_name(r.pass),
              r.shape->text.c_str(), r.dtype->name.c_str(), r.threads);
  if (!r.error.empty()) {
    std::printf("error: %s\n", r.error.c_str());
    return;
  }
  std::printf("%10s %10s %7.1f %6.2f ", format_time(r.ampkit.median_ms).c_str(),
              format_time(r.ampkit.min_ms).c_str(), gbps(r), gbps(r) / r.copy_gbps);
  if (r.peer)
    std::printf("%10s %6.2f  %s / %s\n", format_time(r.peer->median_ms).c_str(),
                r.peer->median_ms / r.ampkit.median_ms, r.kernel.c_str(), r.peer_impl.c_str());
  else
    std::printf("%10s %6s  %s / %s\n", "-", "-", r.kernel.c_str(), r.peer_note.c_str());
  std::fflush(stdout);
}

/// Where the run stands against the targets (table mode only).
void print_targets(const std::vector<Row>& rows) {
  int large = 0, large_met = 0, mixed = 0, mixed_met = 0, small = 0, small_met = 0;
  std::string large_worst, mixed_worst, small_worst;
  double large_min = 1e9, mixed_max = 0.0, small_max = 0.0;
  for (const Row& r : rows) {
    if (!r.error.empty()) continue;
    const std::string name = std::string(op_name(r.op)) + " " + pass_name(r.pass) + " " +
                             r.shape->text + " " + r.dtype->name + " t" +
                             std::to_string(r.threads);
    if (r.shape->elements() >= (std::int64_t{1} << 20)) {
      const double f = gbps(r) / r.copy_gbps;
      ++large;
      large_met += f >= 0.85;
      if (f < large_min) large_min = f, large_worst = name;
    } else {
      ++small;
      small_met += r.ampkit.median_ms < 2e-3;
      if (r.ampkit.median_ms > small_max) small_max = r.ampkit.median_ms, small_worst = name;
    }
    if (r.dtype->name != "mixed") continue;
    for (const Row& b : rows) {
      if (b.op != r.op || b.pass != r.pass || b.shape != r.shape || b.threads != r.threads ||
          b.dtype->name != "bf16" || !b.error.empty())
        continue;
      const double ratio = r.ampkit.median_ms / b.ampkit.median_ms;
      ++mixed;
      mixed_met += ratio <= 1.05;  // within the timing noise of one run
      if (ratio > mixed_max) mixed_max = ratio, mixed_worst = name;
    }
  }
  std::printf("\ntargets:\n");
  if (large > 0)
    std::printf("  shapes >= 2^20 elements at >= 0.85 x copy: %d of %d; lowest %.2f (%s)\n",
                large_met, large, large_min, large_worst.c_str());
  if (mixed > 0)
    std::printf("  mixed no slower than bf16 (within 5%%): %d of %d; worst mixed/bf16 time %.2f "
                "(%s)\n", mixed_met, mixed, mixed_max, mixed_worst.c_str());
  if (small > 0)
    std::printf("  small shapes < 2 us per call: %d of %d; slowest %s (%s)\n", small_met, small,
                format_time(small_max).c_str(), small_worst.c_str());
}

struct Plan {
  std::vector<Op> ops;
  std::vector<Pass> passes;
  std::vector<DtypeMix> dtypes;
  std::vector<Shape> shapes;
  std::vector<int> threads;
  bool peer = true;
  bool json = false;
  bool quick = false;
  int reps = 0;
};

Plan make_plan(const Args& args, bool* help) {
  const bench::Options o(args, kCommand,
                         {{"--op", true}, {"--pass", true}, {"--dtype", true},
                          {"--shapes", true}, {"--no-peer", false}});
  *help = o.common().help;
  Plan p;
  p.json = o.common().json;
  p.quick = o.common().quick;
  p.reps = o.common().reps;
  p.peer = !o.has("--no-peer");
  p.threads = o.common().threads.empty() ? std::vector<int>{1, 2} : o.common().threads;
  const std::string op = o.value_or("--op", "all");
  if (op == "layer_norm" || op == "all") p.ops.push_back(Op::layer_norm);
  if (op == "rms_norm" || op == "all") p.ops.push_back(Op::rms_norm);
  if (p.ops.empty()) fail(kCommand, "--op expects layer_norm, rms_norm or all, but got '", op, "'");
  const std::string pass = o.value_or("--pass", "all");
  if (pass == "forward" || pass == "all") p.passes.push_back(Pass::forward);
  if (pass == "backward" || pass == "all") p.passes.push_back(Pass::backward);
  if (p.passes.empty())
    fail(kCommand, "--pass expects forward, backward or all, but got '", pass, "'");
  std::string dtypes = o.value_or("--dtype", "f32,bf16,mixed");
  if (dtypes == "all") dtypes = "f32,bf16,mixed,f16,mixed_f16";
  for (const std::string& d : bench::split_list(dtypes)) p.dtypes.push_back(parse_dtype_mix(d));
  if (p.dtypes.empty()) fail(kCommand, "--dtype expects a list like f32,mixed, but got '", dtypes, "'");
  const char* default_shapes =
      p.quick ? "1x8x16,32x8x16,4096x1024"
              : "1x8x16,8x8x16,32x8x16,64x128x56x56,64x128x256x256,16384x1024,8192x4096,"
                "4096x12288";
  const std::string shapes = o.value_or("--shapes", default_shapes);
  for (const std::string& s : bench::split_list(shapes)) p.shapes.push_back(parse_shape(s));
  if (p.shapes.empty()) fail(kCommand, "--shapes expects a list like 16384x1024, but got '", shapes, "'");
  return p;
}

/// Prints a note: on stdout in table mode, on stderr in JSON mode (stdout stays JSON lines).
void note(const Plan& p, const std::string& text) {
  std::fprintf(p.json ? stderr : stdout, "# %s\n", text.c_str());
  std::fflush(p.json ? stderr : stdout);
}

/// Drops the largest shapes until 4 [rows, n] tensors of the widest selected dtype, plus
/// statistics, fit in the memory available now with 1.5 GiB to spare; returns the byte sizes.
std::int64_t fit_shapes_in_memory(Plan& p, std::int64_t* max_rows, std::int64_t* max_n) {
  std::size_t widest = 0;
  for (const DtypeMix& d : p.dtypes) widest = std::max(widest, dtype_size(d.x));
  const double available = static_cast<double>(bench::available_memory_bytes());
  for (;;) {
    std::int64_t elements = 0;
    *max_rows = 1;
    *max_n = 1;
    for (const Shape& s : p.shapes) {
      elements = std::max(elements, s.elements());
      *max_rows = std::max(*max_rows, s.rows);
      *max_n = std::max(*max_n, s.n);
    }
    const double need = 4.0 * static_cast<double>(elements) * static_cast<double>(widest) +
                        4.0 * 4.0 * static_cast<double>(*max_rows);
    if (p.shapes.empty() || available <= 0.0 || need + 1.5 * (1 << 30) <= available)
      return elements;
    auto largest = std::max_element(p.shapes.begin(), p.shapes.end(), [](const Shape& a, const Shape& b) {
      return a.elements() < b.elements();
    });
    char text[200];
    std::snprintf(text, sizeof text,
                  "skipping shape %s: its buffers need %.1f GiB, %.1f GiB available",
                  largest->text.c_str(), need / (1 << 30), available / (1 << 30));
    note(p, text);
    p.shapes.erase(largest);
  }
}

MeasureOptions measure_options(const Plan& p, std::int64_t bytes, int rounds) {
  MeasureOptions m;
  const bool huge = bytes >= (std::int64_t{1} << 30);
  m.warmup_calls = huge ? 1 : 2;
  const int samples = p.reps > 0 ? p.reps : huge ? 3 : p.quick ? 3 : 7;
  m.min_samples = std::max(1, (samples + rounds - 1) / rounds);
  m.min_total_ms = (huge ? 0.0 : p.quick ? 20.0 : 120.0) / rounds;
  m.min_sample_ms = 0.2;
  return m;
}

}  // namespace

int run_bench_norm(const Args& args) {
  bool help = false;
  Plan p = make_plan(args, &help);
  if (help) {
    std::printf("%s", kUsage);
    return 0;
  }
  const int max_threads = *std::max_element(p.threads.begin(), p.threads.end());
  const bench::Timer run_timer;

  // The ceiling, measured first in this run for each thread count.
  std::vector<double> copy_gbps;
  for (const int t : p.threads) copy_gbps.push_back(bench::copy_bandwidth_gbps(t, p.quick ? 3 : 9));

  std::int64_t max_rows = 1, max_n = 1;
  const std::int64_t max_elements = fit_shapes_in_memory(p, &max_rows, &max_n);
  std::size_t widest = 0;
  for (const DtypeMix& d : p.dtypes) widest = std::max(widest, dtype_size(d.x));
  const auto tensor_bytes = static_cast<std::size_t>(max_elements) * widest;
  const auto param_bytes = static_cast<std::size_t>(max_n) * 4;
  const auto stat_bytes = static_cast<std::size_t>(max_rows) * 4;
  Buffers b{AlignedBuffer(tensor_bytes, max_threads), AlignedBuffer(tensor_bytes, max_threads),
            AlignedBuffer(tensor_bytes, max_threads), AlignedBuffer(tensor_bytes, max_threads),
            AlignedBuffer(param_bytes, max_threads),  AlignedBuffer(param_bytes, max_threads),
            AlignedBuffer(param_bytes, max_threads),  AlignedBuffer(param_bytes, max_threads),
            AlignedBuffer(stat_bytes, max_threads),   AlignedBuffer(stat_bytes, max_threads),
            AlignedBuffer(stat_bytes, max_threads),   AlignedBuffer(stat_bytes, max_threads)};

#if AMPKIT_HAVE_ONEDNN
  const std::string peer_name = onednn_version();
#else
  const std::string peer_name = "oneDNN not built in (libdnnl-dev not found by CMake)";
  p.peer = false;
#endif
  if (!p.json) {
    std::printf("ampkit bench norm — %s — %s — isa %s\n", bench::today().c_str(),
                bench::machine_description().c_str(), isa_name(active_isa()).data());
    for (std::size_t i = 0; i < p.threads.size(); ++i)
      std::printf("copy bandwidth, %d thread%s: %.1f GB/s (read + write bytes, median)\n",
                  p.threads[i], p.threads[i] > 1 ? "s" : "", copy_gbps[i]);
    std::printf("peer: %s; ratio = peer time / ampkit time (> 1: ampkit faster)\n\n",
                p.peer ? peer_name.c_str() : "none");
    print_table_header();
  }

  std::vector<Row> rows;
  bool any_error = false;
  for (const Shape& shape : p.shapes) {
    for (const DtypeMix& dt : p.dtypes) {
      // Inputs: x with an offset (LayerNorm must subtract it), dy, gamma near 1, beta near 0.
      fill(b.x.data(), dt.x, shape.elements(), 1, 1.5f, 1.0f, max_threads);
      fill(b.dy.data(), dt.x, shape.elements(), 2, 0.0f, 1.0f, max_threads);
      fill(b.gamma.data(), dt.param, shape.n, 3, 1.0f, 0.25f, 1);
      fill(b.beta.data(), dt.param, shape.n, 4, 0.0f, 0.25f, 1);
      for (const Op op : p.ops) {
        const bool ln = op == Op::layer_norm;
        const std::int64_t nrows = shape.rows, n = shape.n;
        NormForwardArgs fa;
        fa.x = TensorView(b.x.data(), dt.x, {nrows, n});
        fa.gamma = TensorView(b.gamma.data(), dt.param, {n});
        if (ln) fa.beta = TensorView(b.beta.data(), dt.param, {n});
        fa.eps = kEps;
        fa.y = TensorView(b.y.data(), dt.x, {nrows, n});
        if (ln) fa.mean = TensorView(b.mean.data(), DType::f32, {nrows});
        fa.rstd = TensorView(b.rstd.data(), DType::f32, {nrows});
        NormBackwardArgs ba;
        ba.dy = TensorView(b.dy.data(), dt.x, {nrows, n});
        ba.x = fa.x;
        ba.mean = fa.mean;
        ba.rstd = fa.rstd;
        ba.gamma = fa.gamma;
        ba.dx = TensorView(b.dx.data(), dt.x, {nrows, n});
        ba.dgamma = TensorView(b.dgamma.data(), dt.param, {n});
        if (ln) ba.dbeta = TensorView(b.dbeta.data(), dt.param, {n});
        const NormKind kind = ln ? NormKind::layer : NormKind::rms;
        auto forward = [&] { ln ? layer_norm_forward(fa) : rms_norm_forward(fa); };
        auto backward = [&] { ln ? layer_norm_backward(ba) : rms_norm_backward(ba); };
        for (const Pass pass : p.passes) {
          for (std::size_t ti = 0; ti < p.threads.size(); ++ti) {
            const int t = p.threads[ti];
            set_num_threads(t);
            omp_set_num_threads(t);
            Row r{op, pass, &shape, &dt, t, {}, bytes_moved(op, pass, shape, dt), copy_gbps[ti],
                  pass == Pass::backward ? norm_kernel_name(kind, ba) : norm_kernel_name(kind, fa), std::nullopt,
                  ln ? "" : "oneDNN 2.6 has no RMSNorm", "", ""};
            if (!p.peer && ln) r.peer_note = "peer not measured";
            try {
              if (pass == Pass::backward) forward();  // mean and rstd for the backward
#if AMPKIT_HAVE_ONEDNN
              std::optional<OnednnLayerNorm> peer;
              if (p.peer && ln) {
                OnednnNormBuffers pb{b.x.data(), b.y.data(), b.dy.data(), b.dx.data(),
                                     b.gamma.as<float>(), b.beta.as<float>(),
                                     b.dgamma.as<float>(), b.dbeta.as<float>(),
                                     b.peer_mean.as<float>(), b.peer_var.as<float>()};
                peer.emplace(shape.rows, shape.n, dt.x, dt.param, kEps, pb);
                if (!peer->available()) {
                  r.peer_note = "oneDNN unavailable: " + peer->reason();
                  peer.reset();
                } else {
                  r.peer_impl = pass == Pass::forward ? peer->forward_impl() : peer->backward_impl();
                  if (pass == Pass::backward) peer->forward();  // its mean and variance
                }
              }
              if (peer) {
                // Alternate: ampkit, oneDNN, ampkit, oneDNN on the same buffers; pool the samples.
                const MeasureOptions mo = measure_options(p, r.bytes, 2);
                std::vector<Measurement> mine, theirs;
                for (int round = 0; round < 2; ++round) {
                  mine.push_back(pass == Pass::forward ? bench::measure(forward, mo)
                                                       : bench::measure(backward, mo));
                  theirs.push_back(pass == Pass::forward
                                       ? bench::measure([&] { peer->forward(); }, mo)
                                       : bench::measure([&] { peer->backward(); }, mo));
                }
                r.ampkit = bench::pool_measurements(mine);
                r.peer = bench::pool_measurements(theirs);
              } else
#endif
              {
                const MeasureOptions mo = measure_options(p, r.bytes, 1);
                r.ampkit = pass == Pass::forward ? bench::measure(forward, mo)
                                                 : bench::measure(backward, mo);
              }
            } catch (const Error& e) {
              r.error = e.what();
              any_error = true;
            }
            p.json ? print_json(r) : print_table_row(r);
            rows.push_back(std::move(r));
          }
        }
      }
    }
  }

  if (!p.json) {
    print_targets(rows);
    std::printf("\ncopy bandwidth re-measured at the end:");
    bool drifted = false;
    for (std::size_t i = 0; i < p.threads.size(); ++i) {
      const double end = bench::copy_bandwidth_gbps(p.threads[i], p.quick ? 3 : 9);
      drifted |= std::abs(end / copy_gbps[i] - 1.0) > 0.15;
      std::printf(" %d thr %.1f GB/s;", p.threads[i], end);
    }
    std::printf(" run took %.0f s\n", run_timer.elapsed_ms() * 1e-3);
    if (drifted)
      std::printf("warning: the copy bandwidth moved by more than 15%% during the run (a busy "
                  "machine?); re-run the rows that matter\n");
  }
  return any_error ? 1 : 0;
}

}  // namespace ampkit::tools
