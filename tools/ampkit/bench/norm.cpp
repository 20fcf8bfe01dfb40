// `ampkit bench norm` (tools layer, bench/): times LayerNorm and RMSNorm forward and backward over
// the shapes of PyTorch's mixed-LayerNorm work and transformer shapes, every dtype mix, 1 and 2
// threads; reports GB/s of the bytes that must move, the fraction of the copy bandwidth measured
// in the same run at the same footprint (copy_ceiling.hpp), and oneDNN's layer normalization as the peer (ratio =
// peer_ms / ms, > 1 means ampkit is faster). Cases: norm_case.hpp; output: norm_report.hpp.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/threading.hpp"
#include "ampkit/device/cpu.hpp"
#include "ampkit/ops/norm.hpp"
#include "tools/ampkit/bench/copy_ceiling.hpp"
#include "tools/ampkit/bench/cuda/cuda_bench.hpp"
#include "tools/ampkit/bench/fill.hpp"
#include "tools/ampkit/bench/machine.hpp"
#include "tools/ampkit/bench/norm_case.hpp"
#include "tools/ampkit/bench/norm_report.hpp"
#include "tools/ampkit/bench/options.hpp"
#include "tools/ampkit/bench/peers/onednn_norm.hpp"
#include "tools/ampkit/bench/peers/torch_norm_peer.hpp"
#include "tools/ampkit/commands.hpp"
#include "tools/ampkit/common/memory.hpp"

namespace ampkit::tools {
namespace {

using namespace bench;

constexpr float kEps = 1e-5f;

// What to measure, from the command line.
struct NormPlan {
  std::vector<NormOp> ops;
  std::vector<NormPass> passes;
  std::vector<DtypeMix> dtypes;
  std::vector<NormShape> shapes;
  std::vector<int> threads;
  bool peer = true;
  bool torch = true;
  bool json = false;
  bool quick = false;
  int reps = 0;
};

// Parses the command line; nullopt when --help was given (and printed).
std::optional<NormPlan> make_plan(const Args& args) {
  CommonOptions common;
  std::optional<std::string> op, pass, dtypes, shapes;
  bool no_peer = false, no_torch = false;
  cli::OptionParser parser("bench norm", "LayerNorm / RMSNorm forward and backward vs copy bandwidth and oneDNN.");
  parser.choice("--op", {"layer_norm", "rms_norm", "all"}, &op, "(default all)")
      .choice("--pass", {"forward", "backward", "all"}, &pass, "(default all)")
      .text("--dtype", "LIST", &dtypes,
            "of f32, bf16, mixed (bf16 x, f32 params), f16, mixed_f16 (f16 x, f32\n"
            "params), or all   (default f32,bf16,mixed)")
      .text("--shapes", "LIST", &shapes,
            "e.g. 64x128x56x56,16384x1024: normalized over the last dim, at most\n"
            "2^36 elements each (default: 1x8x16, 8x8x16, 32x8x16, 64x128x56x56,\n"
            "64x128x256x256, 16384x1024, 8192x4096, 4096x12288)")
      .flag("--no-peer", &no_peer, "skip the peers (oneDNN and PyTorch)")
      .flag("--no-torch", &no_torch, "skip PyTorch (bench/torch_norm_cpu.py, run where python3 imports torch)");
  add_common_options(parser, &common);
  parser.footer(
      "time = median per call, best = fastest sample; GB/s (of the median) counts the bytes that\n"
      "must move (docs/PERFORMANCE.md); copy = the copy bandwidth measured in this run with the\n"
      "same thread count at the same footprint (read + write bytes) as the case, capped at the\n"
      "DRAM class (max(512 MiB, 8x L3)); x copy = GB/s / copy; ratio = oneDNN ms / ampkit ms\n"
      "(> 1: ampkit faster).\n"
      "Shapes whose buffers do not fit in the memory available now are skipped with a note; when\n"
      "none fits, the run is refused (exit 1).");
  if (!parser.parse(args)) return std::nullopt;

  NormPlan p;
  p.json = common.json;
  p.quick = common.quick;
  p.reps = common.reps ? static_cast<int>(*common.reps) : 0;
  p.peer = !no_peer;
  p.torch = !no_peer && !no_torch;
  p.threads = common.threads.empty() ? std::vector<int>{1, 2} : common.threads;
  const std::string ops = op.value_or("all"), passes = pass.value_or("all");
  if (ops == "layer_norm" || ops == "all") p.ops.push_back(NormOp::layer_norm);
  if (ops == "rms_norm" || ops == "all") p.ops.push_back(NormOp::rms_norm);
  if (passes == "forward" || passes == "all") p.passes.push_back(NormPass::forward);
  if (passes == "backward" || passes == "all") p.passes.push_back(NormPass::backward);
  std::string dtype_list = dtypes.value_or("f32,bf16,mixed");
  if (dtype_list == "all") dtype_list = "f32,bf16,mixed,f16,mixed_f16";
  for (const std::string& d : cli::split_list(dtype_list)) p.dtypes.push_back(parse_dtype_mix(d));
  if (p.dtypes.empty()) cli::usage_fail("--dtype expects a list like f32,mixed, but got '", dtype_list, "'");
  const char* default_shapes = p.quick ? "1x8x16,32x8x16,4096x1024"
                                       : "1x8x16,8x8x16,32x8x16,64x128x56x56,64x128x256x256,16384x1024,8192x4096,"
                                         "4096x12288";
  const std::string shape_list = shapes.value_or(default_shapes);
  for (const std::string& s : cli::split_list(shape_list)) p.shapes.push_back(parse_norm_shape(s));
  if (p.shapes.empty()) cli::usage_fail("--shapes expects a list like 16384x1024, but got '", shape_list, "'");
  return p;
}

/// Prints a note: on stdout in table mode, on stderr in JSON mode (stdout stays JSON lines).
void note(const NormPlan& p, const std::string& text) {
  std::fprintf(p.json ? stderr : stdout, "# %s\n", text.c_str());
  std::fflush(p.json ? stderr : stdout);
}

// The largest case's sizes (elements of a [rows, n] tensor, rows, n).
struct NormSizes {
  std::int64_t elements = 0, rows = 1, n = 1;
  std::size_t widest = 0;  // bytes per element of the widest x dtype
};

NormSizes largest_sizes(const NormPlan& p) {
  NormSizes z;
  for (const DtypeMix& d : p.dtypes) z.widest = std::max(z.widest, dtype_size(d.x));
  for (const NormShape& s : p.shapes) {
    z.elements = std::max(z.elements, s.elements());
    z.rows = std::max(z.rows, s.rows);
    z.n = std::max(z.n, s.n);
  }
  return z;
}

/// Drops the largest shapes until 4 [rows, n] tensors of the widest selected dtype, plus
/// statistics and the copy arrays, fit in the memory available now with 1.5 GiB to spare; throws Error
/// (out_of_memory) when not even the smallest fits. Returns the sizes of what remains.
NormSizes fit_shapes_in_memory(NormPlan& p) {
  constexpr double kSpare = 1.5 * (1 << 30);
  const double available = static_cast<double>(available_memory_bytes());
  for (;;) {
    const NormSizes z = largest_sizes(p);
    const double need = 4.0 * static_cast<double>(z.elements) * static_cast<double>(z.widest) +
                        4.0 * 4.0 * static_cast<double>(z.rows) + static_cast<double>(CopyCeiling::dram_footprint());
    if (available <= 0.0 || need + kSpare <= available) return z;
    if (p.shapes.size() == 1) require_memory("--shapes", "shape " + p.shapes.front().text, need, kSpare);
    auto largest = std::max_element(p.shapes.begin(), p.shapes.end(),
                                    [](const NormShape& a, const NormShape& b) { return a.elements() < b.elements(); });
    char text[200];
    std::snprintf(text, sizeof text, "skipping shape %s: its buffers need %.1f GiB, %.1f GiB available",
                  largest->text.c_str(), need / (1 << 30), available / (1 << 30));
    note(p, text);
    p.shapes.erase(largest);
  }
}

MeasureOptions measure_options(const NormPlan& p, std::int64_t bytes, int rounds) {
  MeasureOptions m;
  const bool huge = bytes >= (std::int64_t{1} << 30);
  m.warmup_calls = huge ? 1 : 2;
  const int samples = p.reps > 0 ? p.reps : huge ? 3 : p.quick ? 3 : 7;
  m.min_samples = std::max(1, (samples + rounds - 1) / rounds);
  m.min_total_ms = (huge ? 0.0 : p.quick ? 20.0 : 120.0) / rounds;
  m.min_sample_ms = 0.2;
  return m;
}

/// Every buffer of the run, allocated once for the largest case and reused by every case.
struct NormBuffers {
  AlignedBuffer x, y, dy, dx;                     // [rows, n]
  AlignedBuffer gamma, beta, dgamma, dbeta;       // [n]
  AlignedBuffer mean, rstd, peer_mean, peer_var;  // [rows] f32
};

NormBuffers allocate_buffers(const NormSizes& z, int threads) {
  const auto tensor_bytes = static_cast<std::size_t>(z.elements) * z.widest;
  const auto param_bytes = static_cast<std::size_t>(z.n) * 4;
  const auto stat_bytes = static_cast<std::size_t>(z.rows) * 4;
  return NormBuffers{
      AlignedBuffer(tensor_bytes, threads), AlignedBuffer(tensor_bytes, threads), AlignedBuffer(tensor_bytes, threads),
      AlignedBuffer(tensor_bytes, threads), AlignedBuffer(param_bytes, threads),  AlignedBuffer(param_bytes, threads),
      AlignedBuffer(param_bytes, threads),  AlignedBuffer(param_bytes, threads),  AlignedBuffer(stat_bytes, threads),
      AlignedBuffer(stat_bytes, threads),   AlignedBuffer(stat_bytes, threads),   AlignedBuffer(stat_bytes, threads)};
}

// The forward and backward calls of one op on one shape and dtype mix, on the shared buffers.
struct NormCalls {
  NormForwardArgs forward;
  NormBackwardArgs backward;
  bool layer_norm = true;
  void run_forward() const { layer_norm ? layer_norm_forward(forward) : rms_norm_forward(forward); }
  void run_backward() const { layer_norm ? layer_norm_backward(backward) : rms_norm_backward(backward); }
};

NormCalls make_calls(NormOp op, const NormShape& shape, const DtypeMix& dt, NormBuffers& b) {
  NormCalls c;
  c.layer_norm = op == NormOp::layer_norm;
  const bool ln = c.layer_norm;
  const std::int64_t nrows = shape.rows, n = shape.n;
  NormForwardArgs& fa = c.forward;
  fa.x = TensorView(b.x.data(), dt.x, {nrows, n});
  fa.gamma = TensorView(b.gamma.data(), dt.param, {n});
  if (ln) fa.beta = TensorView(b.beta.data(), dt.param, {n});
  fa.eps = kEps;
  fa.y = TensorView(b.y.data(), dt.x, {nrows, n});
  if (ln) fa.mean = TensorView(b.mean.data(), DType::f32, {nrows});
  fa.rstd = TensorView(b.rstd.data(), DType::f32, {nrows});
  NormBackwardArgs& ba = c.backward;
  ba.dy = TensorView(b.dy.data(), dt.x, {nrows, n});
  ba.x = fa.x;
  ba.mean = fa.mean;
  ba.rstd = fa.rstd;
  ba.gamma = fa.gamma;
  ba.dx = TensorView(b.dx.data(), dt.x, {nrows, n});
  ba.dgamma = TensorView(b.dgamma.data(), dt.param, {n});
  if (ln) ba.dbeta = TensorView(b.dbeta.data(), dt.param, {n});
  return c;
}

// Times one case into r.ampkit (and r.peer when oneDNN takes it: ampkit, oneDNN, ampkit, oneDNN
// on the same buffers, samples pooled). An ampkit::Error of the kernel lands in r.error.
void measure_case(const NormPlan& p, const NormCalls& calls, [[maybe_unused]] NormBuffers& b, NormRow& r) {
  auto forward = [&] { calls.run_forward(); };
  auto backward = [&] { calls.run_backward(); };
  const bool fwd = r.pass == NormPass::forward;
  try {
    if (!fwd) forward();  // mean and rstd for the backward
#if AMPKIT_HAVE_ONEDNN
    std::optional<OnednnLayerNorm> peer;
    if (p.peer && calls.layer_norm) {
      OnednnNormBuffers pb{b.x.data(),
                           b.y.data(),
                           b.dy.data(),
                           b.dx.data(),
                           b.gamma.as<float>(),
                           b.beta.as<float>(),
                           b.dgamma.as<float>(),
                           b.dbeta.as<float>(),
                           b.peer_mean.as<float>(),
                           b.peer_var.as<float>()};
      peer.emplace(r.shape->rows, r.shape->n, r.dtype->x, r.dtype->param, kEps, pb);
      if (!peer->available()) {
        r.peer_note = "oneDNN unavailable: " + peer->reason();
        peer.reset();
      } else {
        r.peer_impl = fwd ? peer->forward_impl() : peer->backward_impl();
        if (!fwd) peer->forward();  // its mean and variance
      }
    }
    if (peer) {
      const MeasureOptions mo = measure_options(p, r.bytes, 2);
      std::vector<Measurement> mine, theirs;
      for (int round = 0; round < 2; ++round) {
        mine.push_back(fwd ? measure(forward, mo) : measure(backward, mo));
        theirs.push_back(fwd ? measure([&] { peer->forward(); }, mo) : measure([&] { peer->backward(); }, mo));
      }
      r.ampkit = pool_measurements(mine);
      r.peer = pool_measurements(theirs);
      return;
    }
#endif
    const MeasureOptions mo = measure_options(p, r.bytes, 1);
    r.ampkit = fwd ? measure(forward, mo) : measure(backward, mo);
  } catch (const Error& e) {
    r.error = e.what();
  }
}

void print_header(const NormPlan& p, CopyCeiling& copy, const std::string& peer_name) {
  std::printf("ampkit bench norm — %s — %s — isa %s\n", today().c_str(), machine_description().c_str(),
              isa_name(active_isa()).data());
  const CpuCaches& caches = cpu_features().caches;
  std::printf("caches: L2 %s per core, L3 %s; copy bandwidth (read + write bytes, median):\n",
              format_bytes(static_cast<double>(caches.l2)).c_str(),
              format_bytes(static_cast<double>(caches.l3)).c_str());
  for (const int t : p.threads) {
    const std::int64_t in_cache = CopyCeiling::in_cache_footprint(t), dram = CopyCeiling::dram_footprint();
    std::printf("  %d thread%s: in cache (footprint %s) %.1f GB/s, DRAM (footprint %s) %.1f GB/s\n", t,
                t > 1 ? "s" : "", format_bytes(static_cast<double>(in_cache)).c_str(), copy.gbps(in_cache, t),
                format_bytes(static_cast<double>(dram)).c_str(), copy.gbps(dram, t));
  }
  std::printf("each row's \"copy\" is measured at that row's footprint (the bytes it moves), same threads\n");
  std::printf("peer: %s; ratio = peer time / ampkit time (> 1: ampkit faster)\n\n",
              p.peer ? peer_name.c_str() : "none");
  print_norm_table_header();
}

// Every shape x dtype x op x pass x thread count, printed as it is measured.
std::vector<NormRow> run_cases(const NormPlan& p, NormBuffers& b, CopyCeiling& copy, int max_threads) {
  std::vector<NormRow> rows;
  for (const NormShape& shape : p.shapes) {
    for (const DtypeMix& dt : p.dtypes) {
      // Inputs: x with an offset (LayerNorm must subtract it), dy, gamma near 1, beta near 0.
      fill_hashed(b.x.data(), dt.x, shape.elements(), 1, 1.5f, 1.0f, max_threads);
      fill_hashed(b.dy.data(), dt.x, shape.elements(), 2, 0.0f, 1.0f, max_threads);
      fill_hashed(b.gamma.data(), dt.param, shape.n, 3, 1.0f, 0.25f, 1);
      fill_hashed(b.beta.data(), dt.param, shape.n, 4, 0.0f, 0.25f, 1);
      for (const NormOp op : p.ops) {
        const NormCalls calls = make_calls(op, shape, dt, b);
        const bool ln = op == NormOp::layer_norm;
        const NormKind kind = ln ? NormKind::layer : NormKind::rms;
        for (const NormPass pass : p.passes) {
          for (const int t : p.threads) {
            set_num_threads(t);
            omp_set_num_threads(t);
            const std::int64_t bytes = bytes_moved(op, pass, shape, dt);
            NormRow r{op,
                      pass,
                      &shape,
                      &dt,
                      t,
                      {},
                      bytes,
                      copy.gbps(bytes, t),
                      pass == NormPass::backward ? norm_kernel_name(kind, calls.backward)
                                                 : norm_kernel_name(kind, calls.forward),
                      std::nullopt,
                      ln ? "" : "oneDNN 2.6 has no RMSNorm",
                      "",
                      "",
                      CopyCeiling::measured_footprint(bytes),
                      copy.gbps(CopyCeiling::dram_footprint(), t),
                      0.0,
                      ""};
            if (!p.peer && ln) r.peer_note = "peer not measured";
            measure_case(p, calls, b, r);
            p.json ? print_norm_json(r) : print_norm_table_row(r);
            rows.push_back(std::move(r));
          }
        }
      }
    }
  }
  return rows;
}

// The PyTorch phase, after every ampkit case (its own process, one per thread count), then its
// table or JSON lines. Rows with an error are left out.
void torch_phase(const NormPlan& p, std::vector<NormRow>& rows) {
  std::string version, why;
  for (const int t : p.threads) {
    std::vector<TorchNormCase> cases;
    std::vector<NormRow*> of_case;
    for (NormRow& r : rows)
      if (r.threads == t && r.error.empty()) {
        cases.push_back({norm_op_name(r.op), norm_pass_name(r.pass), std::string(dtype_name(r.dtype->x)),
                         std::string(dtype_name(r.dtype->param)), r.shape->rows, r.shape->n});
        of_case.push_back(&r);
      }
    if (cases.empty()) continue;
    const MeasureOptions mo = measure_options(p, 0, 1);
    const std::vector<TorchNormPoint> points =
        run_torch_norm_peer(cases, t, mo.min_samples, mo.min_total_ms, version, why);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (points.empty()) {
        of_case[i]->torch_note = why;
        continue;
      }
      of_case[i]->torch_ms = points[i].ms;
      of_case[i]->torch_note = points[i].skipped;
    }
  }
  print_norm_torch(rows, version.empty() ? "(not run)" : version, p.json);
}

// Table mode: the targets, and the DRAM-class copy bandwidth again (a drift warns of a busy
// machine).
void print_footer(const NormPlan& p, const std::vector<NormRow>& rows, CopyCeiling& copy, const Timer& run_timer) {
  print_norm_targets(rows);
  std::printf("\ncopy bandwidth (DRAM class) re-measured at the end:");
  bool drifted = false;
  for (const int t : p.threads) {
    const double start = copy.gbps(CopyCeiling::dram_footprint(), t);
    const double end = copy.remeasure(CopyCeiling::dram_footprint(), t);
    drifted |= std::abs(end / start - 1.0) > 0.15;
    std::printf(" %d thr %.1f GB/s (start %.1f);", t, end, start);
  }
  std::printf(" run took %.0f s\n", run_timer.elapsed_ms() * 1e-3);
  if (drifted)
    std::printf(
        "warning: the copy bandwidth moved by more than 15%% during the run (a busy "
        "machine?); re-run the rows that matter\n");
}

}  // namespace

int run_bench_norm(const Args& given) {
  Args args = given;
  if (bench::take_device_option(args) == "cuda") return bench::run_bench_norm_cuda(args);  // bench/cuda/
  std::optional<NormPlan> plan = make_plan(args);
  if (!plan) return 0;
  NormPlan& p = *plan;
  const int max_threads = *std::max_element(p.threads.begin(), p.threads.end());
  const Timer run_timer;
  const NormSizes sizes = fit_shapes_in_memory(p);  // refused here when nothing fits

  // The ceilings: copy at each case's footprint, measured in this run with the case's threads
  // (the in-cache and DRAM classes first, in the header).
  CopyCeiling copy(max_threads, measure_options(p, 0, 1));
  std::optional<NormBuffers> buffers(allocate_buffers(sizes, max_threads));

#if AMPKIT_HAVE_ONEDNN
  const std::string peer_name = onednn_version();
#else
  const std::string peer_name = "oneDNN not built in (libdnnl-dev not found by CMake)";
  p.peer = false;
#endif
  if (!p.json) print_header(p, copy, peer_name);
  std::vector<NormRow> rows = run_cases(p, *buffers, copy, max_threads);
  buffers.reset();  // PyTorch allocates its own tensors
  if (p.torch) torch_phase(p, rows);
  if (!p.json) print_footer(p, rows, copy, run_timer);
  for (const NormRow& r : rows)
    if (!r.error.empty()) return 1;
  return 0;
}

}  // namespace ampkit::tools
