// `ampkit bench linear` (tools layer, bench/): the Linear layer's passes through its public API —
// forward with bias (BIAS) and with bias + GELU saving the pre-activation (GELU_AUX_BIAS),
// backward dx fused with the layer below's GELU gradient and bias gradient (DGELU_BGRAD) and
// dw with db (BGRADB) — on transformer-like shapes (batch x in -> out), as GFLOP/s, a fraction
// of the peak measured in the same run, and ratios to OpenBLAS sgemm / oneDNN matmul of the same
// GEMM (each in its own process / phase).
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "ampkit/layers/linear.hpp"
#include "tools/ampkit/bench/fill.hpp"
#include "tools/ampkit/bench/gemm_case.hpp"
#include "tools/ampkit/bench/gemm_peer_phases.hpp"
#include "tools/ampkit/bench/gemm_rows.hpp"
#include "tools/ampkit/commands.hpp"
#include "tools/ampkit/common/memory.hpp"

namespace ampkit::tools {
namespace {

using namespace bench;

constexpr const char* kAllPasses = "forward,forward_gelu,backward_dx,backward_dw";

struct LinearShape {
  std::int64_t batch, in, out;
};

// What to measure, from the command line.
struct LinearPlan {
  std::vector<LinearShape> shapes;
  std::vector<DtypeMode> dtypes;
  std::vector<std::string> passes;
  RunSettings settings;
  bool json = false, quick = false;
};

// Parses the command line; nullopt when --help was given (and printed).
std::optional<LinearPlan> parse_plan(const Args& args) {
  CommonOptions common;
  std::optional<std::string> shapes, dtypes, passes, peers;
  cli::OptionParser parser("bench linear", "GFLOP/s of the Linear layer's passes vs the machine's peaks and peers.");
  parser
      .text("--shapes", "BxIxO,...", &shapes,
            "batch x in -> out, each in [1, 2^20]; default 2048x768x3072 (MLP up),\n"
            "2048x3072x768 (MLP down), 2048x768x2304 (QKV), 2048x1024x4096, 16x4096x4096")
      .text("--dtype", "LIST", &dtypes, "f32,bf16,f16 (f16 = every fp16 mode, or f16:exact/flush/alt)")
      .text("--pass", "LIST", &passes,
            "forward (BIAS), forward_gelu (GELU_AUX_BIAS), backward_dx\n"
            "(DGELU_BGRAD of the layer below), backward_dw (BGRADB); default all")
      .text("--peers", "LIST", &peers, "openblas,onednn,torch (default; torch where python3 imports it) or none");
  add_common_options(parser, &common, "1,2; 1 with --quick");
  parser.footer(
      "x, w, y, dy, dx, dw, aux in the dtype; bias, db, below_db f32. GFLOP/s = 2 batch in out / s.\n"
      "A run whose buffers do not fit in the memory available now is refused up front (exit 1).");
  if (!parser.parse(args)) return std::nullopt;

  LinearPlan p;
  p.quick = common.quick;
  p.json = common.json;
  for (const auto& t : parse_triples(shapes.value_or(p.quick ? "256x768x3072,16x768x768"
                                                             : "2048x768x3072,2048x3072x768,2048x768x2304,"
                                                               "2048x1024x4096,16x4096x4096"),
                                     "BATCHxINxOUT"))
    p.shapes.push_back({t[0], t[1], t[2]});
  p.dtypes = parse_dtype_modes(dtypes.value_or(p.quick ? "f32,bf16" : "f32,bf16,f16"));
  p.passes = cli::split_list(passes.value_or(kAllPasses));
  for (const std::string& pass : p.passes)
    if (pass != "forward" && pass != "forward_gelu" && pass != "backward_dx" && pass != "backward_dw")
      cli::usage_fail("--pass: unknown pass '", pass, "' (expected some of ", kAllPasses, ")");
  if (p.passes.empty()) cli::usage_fail("--pass expects some of ", kAllPasses, ", but got '", *passes, "'");
  p.settings = make_run_settings(common, peers);
  return p;
}

// Buffers for the largest shape, 4 bytes per element; allocated and touched once.
struct LinearBuffers {
  std::int64_t max_x = 1, max_w = 1, max_y = 1, max_vec = 1;
  AlignedBuffer x, w, bias, y, aux, dy, dx, below_aux, below_db, dw, db;
};

// The element counts; throws Error (out_of_memory) when the buffers would not fit in the memory
// available now, before anything is measured.
LinearBuffers size_buffers(const LinearPlan& p) {
  LinearBuffers b;
  for (const LinearShape& s : p.shapes) {
    b.max_x = std::max(b.max_x, s.batch * s.in);
    b.max_w = std::max(b.max_w, s.out * s.in);
    b.max_y = std::max(b.max_y, s.batch * s.out);
    b.max_vec = std::max({b.max_vec, s.in, s.out});
  }
  // x, dx, below_aux; w, dw; y, aux, dy; bias, below_db, db.
  const double need = 4.0 * (3.0 * static_cast<double>(b.max_x) + 2.0 * static_cast<double>(b.max_w) +
                             3.0 * static_cast<double>(b.max_y) + 3.0 * static_cast<double>(b.max_vec));
  require_memory("--shapes", "the largest shape", need);
  return b;
}

void allocate_buffers(const LinearPlan& p, LinearBuffers& b) {
  const int touch = *std::max_element(p.settings.threads.begin(), p.settings.threads.end());
  auto buffer = [&](std::int64_t n) { return AlignedBuffer(static_cast<std::size_t>(n) * 4, touch); };
  b.x = buffer(b.max_x), b.w = buffer(b.max_w), b.bias = buffer(b.max_vec), b.y = buffer(b.max_y);
  b.aux = buffer(b.max_y), b.dy = buffer(b.max_y), b.dx = buffer(b.max_x), b.below_aux = buffer(b.max_x);
  b.below_db = buffer(b.max_vec), b.dw = buffer(b.max_w), b.db = buffer(b.max_vec);
  fill_uniform(b.bias.data(), DType::f32, b.max_vec, 4, 0.5f);
}

// The forward call of a case ("forward" or "forward_gelu"); sets the row's GEMM, epilogue, kernel.
LinearForwardArgs forward_case(const LinearShape& s, const DtypeMode& dm, const std::string& pass, LinearBuffers& b,
                               BenchRow& r) {
  const DType t = dm.dtype;
  LinearForwardArgs f;
  f.x = TensorView(b.x.data(), t, {s.batch, s.in});
  f.w = TensorView(b.w.data(), t, {s.out, s.in});
  f.bias = TensorView(b.bias.data(), DType::f32, {s.out});
  f.y = TensorView(b.y.data(), t, {s.batch, s.out});
  f.fp16_mode = dm.mode;
  if (pass == "forward_gelu") {
    f.gelu = true;
    f.aux = TensorView(b.aux.data(), t, {s.batch, s.out});
  }
  // The GEMM of the forward: m = out, n = batch, k = in, op(A) = Wᵀ.
  r.shape = {s.out, s.batch, s.in, Op::T, Op::N};
  r.epilogue = f.gelu ? Epilogue::GELU_AUX_BIAS : Epilogue::BIAS;
  r.kernel = linear_kernel_name(f);
  return f;
}

// The backward call of a case ("backward_dx" or "backward_dw"); sets the row's GEMM and epilogue.
LinearBackwardArgs backward_case(const LinearShape& s, const DtypeMode& dm, const std::string& pass, LinearBuffers& b,
                                 BenchRow& r) {
  const DType t = dm.dtype;
  LinearBackwardArgs g;
  g.dy = TensorView(b.dy.data(), t, {s.batch, s.out});
  g.x = TensorView(b.x.data(), t, {s.batch, s.in});
  g.w = TensorView(b.w.data(), t, {s.out, s.in});
  g.fp16_mode = dm.mode;
  if (pass == "backward_dx") {
    g.dx = TensorView(b.dx.data(), t, {s.batch, s.in});
    g.below_gelu = true;
    g.below_aux = TensorView(b.below_aux.data(), t, {s.batch, s.in});
    g.below_db = TensorView(b.below_db.data(), DType::f32, {s.in});
    // dX GEMM: m = in, n = batch, k = out.
    r.shape = {s.in, s.batch, s.out, Op::N, Op::N};
    r.epilogue = Epilogue::DGELU_BGRAD;
  } else {
    g.dw = TensorView(b.dw.data(), t, {s.out, s.in});
    g.db = TensorView(b.db.data(), DType::f32, {s.out});
    // dW GEMM: m = in, n = out, k = batch, op(B) = dYᵀ.
    r.shape = {s.in, s.out, s.batch, Op::N, Op::T};
    r.epilogue = Epilogue::BGRADB;
  }
  return g;
}

// ampkit's cases: every dtype x shape x pass x thread count.
std::vector<BenchRow> measure_cases(const LinearPlan& p, LinearBuffers& b) {
  std::vector<BenchRow> rows;
  const int saved_threads = num_threads();
  for (const DtypeMode& dm : p.dtypes) {
    const DType t = dm.dtype;
    fill_uniform(b.x.data(), t, b.max_x, 1, 1.0f);
    fill_uniform(b.w.data(), t, b.max_w, 2, 0.05f);
    fill_uniform(b.dy.data(), t, b.max_y, 3, 1.0f);
    fill_uniform(b.below_aux.data(), t, b.max_x, 5, 2.0f);
    for (const LinearShape& s : p.shapes)
      for (const std::string& pass : p.passes)
        for (int th : p.settings.threads) {
          BenchRow r;
          r.op = "linear";
          r.pass = pass;
          r.batch = s.batch;
          r.in = s.in;
          r.out = s.out;
          r.dm = dm;
          r.threads = th;
          const bool forward = pass == "forward" || pass == "forward_gelu";
          LinearForwardArgs f;
          LinearBackwardArgs g;
          if (forward)
            f = forward_case(s, dm, pass, b, r);
          else
            g = backward_case(s, dm, pass, b, r);
          set_num_threads(th);
          const Measurement m = forward ? measure([&] { linear_forward(f); }, p.settings.measure)
                                        : measure([&] { linear_backward(g); }, p.settings.measure);
          r.ms = m.median_ms;
          r.gflops = gemm_gflops(r.shape, m.median_ms);
          rows.push_back(r);
          if (!p.json)
            std::fprintf(stderr, "  measured %s %s %lldx%lldx%lld %d thread(s): %.1f GFLOP/s\n", dm.name().c_str(),
                         pass.c_str(), static_cast<long long>(s.batch), static_cast<long long>(s.in),
                         static_cast<long long>(s.out), th, r.gflops);
        }
  }
  set_num_threads(saved_threads);
  return rows;
}

}  // namespace

int run_bench_linear(const Args& args) {
  const std::optional<LinearPlan> plan = parse_plan(args);
  if (!plan) return 0;
  LinearBuffers buffers = size_buffers(*plan);  // refused here when they would not fit
  Peaks peaks = Peaks::measure(plan->settings.threads, plan->quick ? 3 : 5, plan->settings.measure.clock);
  allocate_buffers(*plan, buffers);
  std::vector<BenchRow> rows = measure_cases(*plan, buffers);
  std::vector<std::string> notes;
  peaks.remeasure_keep_max(plan->quick ? 3 : 5);
  attach_peers(rows, peaks, plan->settings.peers, plan->settings.measure, notes);
  notes.push_back("oneDNN's gelu_tanh post-op does not save the pre-activation (ampkit's forward_gelu writes aux too)");
  if (plan->json)
    print_json_rows(rows);
  else
    print_table(rows, peaks, notes, "ampkit bench linear");
  return 0;
}

}  // namespace ampkit::tools
