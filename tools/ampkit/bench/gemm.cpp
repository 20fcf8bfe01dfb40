// `ampkit bench gemm` (tools layer, bench/): GFLOP/s of ampkit's gemm over shapes, dtypes (fp16
// modes), epilogues and thread counts, as a fraction of this machine's peak measured in the same
// run (fp32 FMA or bf16 dot-product loop) and as a ratio to OpenBLAS sgemm (own process) and
// oneDNN matmul (own phase) measured in the same run. Buffers are allocated once and pre-touched.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ampkit/core/threading.hpp"
#include "ampkit/ops/gemm.hpp"
#include "tools/ampkit/bench/copy_ceiling.hpp"
#include "tools/ampkit/bench/cuda/cuda_bench.hpp"
#include "tools/ampkit/bench/fill.hpp"
#include "tools/ampkit/bench/gemm_case.hpp"
#include "tools/ampkit/bench/gemm_peer_phases.hpp"
#include "tools/ampkit/bench/gemm_rows.hpp"
#include "tools/ampkit/commands.hpp"
#include "tools/ampkit/common/memory.hpp"

namespace ampkit::tools {
namespace {

using namespace bench;

// What to measure, from the command line.
struct GemmPlan {
  std::vector<PeerShape> shapes;
  std::vector<DtypeMode> dtypes;
  std::vector<Epilogue> epilogues;
  RunSettings settings;
  bool json = false, quick = false;
};

// Parses the command line; nullopt when --help was given (and printed).
std::optional<GemmPlan> parse_plan(const Args& args) {
  CommonOptions common;
  std::optional<std::string> shapes, dtypes, epilogues, op, peers, clock;
  cli::OptionParser parser("bench gemm",
                           "GFLOP/s of ampkit::gemm vs the machine's peaks, OpenBLAS, oneDNN and PyTorch.");
  parser
      .text("--shapes", "MxNxK,...", &shapes,
            "each dim in [1, 2^20]; default 4096x4096x1024,4096x1024x4096,2048x3072x768,\n"
            "512x512x512,128x768x768,1x4096x4096,16x4096x4096")
      .text("--dtype", "LIST", &dtypes, "f32,bf16,f16 (f16 = f16:exact,f16:flush,f16:alt); default all")
      .text("--epilogue", "LIST", &epilogues, "default DEFAULT,BIAS,GELU_AUX_BIAS,DGELU_BGRAD,BGRADB")
      .choice("--op", {"nn", "tn", "nt", "tt"}, &op, "op(A), op(B) (default nn)")
      .text("--peers", "LIST", &peers, "openblas,onednn,torch (default; torch where python3 imports it) or none")
      .choice("--clock", {"wall", "thread", "process"}, &clock,
              "wall (default); thread: the thread's CPU time, which leaves out the time a\n"
              "1-thread run waits for a core on a loaded machine (only with --threads 1);\n"
              "process: the process's CPU time, GFLOP/s per CPU-second (any thread count,\n"
              "with OMP_WAIT_POLICY=passive). Peaks are timed on the same clock");
  add_common_options(parser, &common, "1,2; 1 with --quick");
  parser.footer(
      "D (m x n, column-major) = epilogue(op(A) op(B)); A, B, D, bias, aux all in the dtype.\n"
      "GFLOP/s = 2mnk/s. Peaks and peers are measured in the same run. A run whose buffers do not\n"
      "fit in the memory available now is refused before anything is measured (exit 1).");
  if (!parser.parse(args)) return std::nullopt;

  GemmPlan p;
  p.quick = common.quick;
  p.json = common.json;
  const std::string ops = op.value_or("nn");
  const Op op_a = ops[0] == 't' ? Op::T : Op::N, op_b = ops[1] == 't' ? Op::T : Op::N;
  for (const auto& t : parse_triples(shapes.value_or(p.quick ? "512x512x512,128x768x768"
                                                             : "4096x4096x1024,4096x1024x4096,2048x3072x768,"
                                                               "512x512x512,128x768x768,1x4096x4096,16x4096x4096"),
                                     "MxNxK"))
    p.shapes.push_back({t[0], t[1], t[2], op_a, op_b});
  p.dtypes = parse_dtype_modes(dtypes.value_or(p.quick ? "f32,bf16" : "f32,bf16,f16"));
  p.epilogues = parse_epilogues(
      epilogues.value_or(p.quick ? "DEFAULT,GELU_AUX_BIAS" : "DEFAULT,BIAS,GELU_AUX_BIAS,DGELU_BGRAD,BGRADB"));
  p.settings = make_run_settings(common, peers);
  if (clock.value_or("wall") == "thread") {
    if (p.settings.threads != std::vector<int>{1})
      cli::usage_fail("--clock thread: only with --threads 1 (other threads' time is not counted)");
    p.settings.measure.clock = BenchClock::thread_cpu;
  } else if (clock.value_or("wall") == "process") {
    const char* wait = std::getenv("OMP_WAIT_POLICY");
    if (wait == nullptr || (std::string(wait) != "passive" && std::string(wait) != "PASSIVE"))
      cli::usage_fail("--clock process: needs OMP_WAIT_POLICY=passive (threads spinning at barriers would count)");
    p.settings.measure.clock = BenchClock::process_cpu;
  }
  if (p.settings.measure.clock != BenchClock::wall && !p.settings.peers.empty())
    cli::usage_fail("--clock ", *clock, ": the peers are timed on the wall clock; add --peers none");
  return p;
}

// Buffers for the largest case, 4 bytes per element whatever the dtype; allocated once.
struct GemmBuffers {
  std::int64_t max_a = 1, max_b = 1, max_d = 1, max_vec = 1;
  AlignedBuffer a, b, d, aux, bias, bias_grad;
};

// The element counts of the buffers; throws Error (out_of_memory) when their bytes exceed the
// memory available now, before anything is measured. Each count is at most 2^40 (dims <= 2^20).
GemmBuffers size_buffers(const GemmPlan& p) {
  GemmBuffers g;
  for (const PeerShape& s : p.shapes) {
    g.max_a = std::max(g.max_a, s.m * s.k);
    g.max_b = std::max(g.max_b, s.k * s.n);
    g.max_d = std::max(g.max_d, s.m * s.n);
    g.max_vec = std::max({g.max_vec, s.m, s.n});
  }
  const double need = 4.0 * (static_cast<double>(g.max_a) + static_cast<double>(g.max_b) +
                             2.0 * static_cast<double>(g.max_d) + 2.0 * static_cast<double>(g.max_vec));
  require_memory("--shapes", "the largest case", need);
  return g;
}

// Allocates and pre-touches the buffers sized by size_buffers.
void allocate_buffers(const GemmPlan& p, GemmBuffers& g) {
  const int touch = *std::max_element(p.settings.threads.begin(), p.settings.threads.end());
  auto buffer = [&](std::int64_t n) { return AlignedBuffer(static_cast<std::size_t>(n) * 4, touch); };
  g.a = buffer(g.max_a);
  g.b = buffer(g.max_b);
  g.d = buffer(g.max_d);
  g.aux = buffer(g.max_d);
  g.bias = buffer(g.max_vec);
  g.bias_grad = buffer(g.max_vec);
}

// The gemm call of one case on the shared buffers: A, B, D, bias, aux all in dm's dtype.
GemmArgs make_gemm_args(const PeerShape& s, const DtypeMode& dm, Epilogue e, GemmBuffers& b) {
  GemmArgs g;
  g.op_a = s.op_a;
  g.op_b = s.op_b;
  g.m = s.m;
  g.n = s.n;
  g.k = s.k;
  g.a = b.a.data();
  g.a_dtype = dm.dtype;
  g.lda = s.op_a == Op::N ? s.m : s.k;
  g.b = b.b.data();
  g.b_dtype = dm.dtype;
  g.ldb = s.op_b == Op::N ? s.k : s.n;
  g.d = b.d.data();
  g.d_dtype = dm.dtype;
  g.ldd = s.m;
  g.fp16_mode = dm.mode;
  g.epilogue.kind = e;
  g.epilogue.bias_dtype = dm.dtype;
  g.epilogue.aux_dtype = dm.dtype;
  g.epilogue.aux_ld = s.m;
  if (epilogue_reads_bias(e)) g.epilogue.bias = b.bias.data();
  if (epilogue_writes_bias_grad(e)) g.epilogue.bias_grad = b.bias_grad.data();
  if (epilogue_uses_aux(e)) g.epilogue.aux = b.aux.data();
  return g;
}

// A memory-bound (skinny: min(m, n) <= 16) case: its copy ceiling is measured.
bool memory_bound(const PeerShape& s) { return std::min(s.m, s.n) <= 16; }

// The bytes one call must move: op(A) and op(B) read once, D written once, aux written (forward)
// or read (backward) once, the bias read and the bias gradient written once; all in the dtype.
double bytes_moved(const PeerShape& s, DType t, Epilogue e) {
  double elements = static_cast<double>(s.m * s.k + s.k * s.n + s.m * s.n);
  if (epilogue_uses_aux(e)) elements += static_cast<double>(s.m * s.n);
  if (epilogue_reads_bias(e)) elements += static_cast<double>(s.m);
  if (epilogue_writes_bias_grad(e)) elements += static_cast<double>(e == Epilogue::BGRADB ? s.n : s.m);
  return elements * static_cast<double>(dtype_size(t));
}

// Phase 1: ampkit, every dtype x shape x epilogue x thread count; cases gemm_check refuses are
// noted and skipped. copy: the copy ceilings of memory-bound cases (null when there are none).
std::vector<BenchRow> measure_cases(const GemmPlan& p, GemmBuffers& b, std::vector<std::string>& notes,
                                    CopyCeiling* copy) {
  std::vector<BenchRow> rows;
  const int saved_threads = num_threads();
  for (const DtypeMode& dm : p.dtypes) {
    fill_uniform(b.a.data(), dm.dtype, b.max_a, 1);
    fill_uniform(b.b.data(), dm.dtype, b.max_b, 2);
    fill_uniform(b.aux.data(), dm.dtype, b.max_d, 3);
    fill_uniform(b.bias.data(), dm.dtype, b.max_vec, 4);
    for (const PeerShape& s : p.shapes)
      for (Epilogue e : p.epilogues)
        for (int t : p.settings.threads) {
          const GemmArgs g = make_gemm_args(s, dm, e, b);
          const std::string problem = gemm_check(g);
          if (!problem.empty()) {
            notes.push_back(std::string("skipped ") + dm.name() + " " + epilogue_name(e) + ": " + problem);
            continue;
          }
          // The backward forms read aux as pre-activations: give them the fill's realistic values
          // (|x| < 1), not what a GELU_AUX case before wrote there (GEMM outputs of uniform
          // operands, |x| up to ~30 at k = 4096, where GELU' once made subnormals).
          if (epilogue_reads_aux(e)) fill_uniform(b.aux.data(), dm.dtype, b.max_d, 3);
          set_num_threads(t);
          BenchRow r;
          r.shape = s;
          r.dm = dm;
          r.epilogue = e;
          r.threads = t;
          r.kernel = gemm_kernel_name(g);
          const Measurement m = measure([&] { gemm(g); }, p.settings.measure);
          r.ms = m.median_ms;
          r.gflops = gemm_gflops(s, m.median_ms);
          if (copy != nullptr && memory_bound(s)) {
            r.bytes = bytes_moved(s, dm.dtype, e);
            r.copy_gbps = copy->gbps(static_cast<std::int64_t>(r.bytes), t);
            r.read_gbps = copy->read_gbps(static_cast<std::int64_t>(r.bytes), t);
          }
          rows.push_back(r);
          if (!p.json)
            std::fprintf(stderr, "  measured %s %lldx%lldx%lld %s %d thread(s): %.1f GFLOP/s\n", dm.name().c_str(),
                         static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
                         epilogue_name(e), t, r.gflops);
        }
  }
  set_num_threads(saved_threads);
  return rows;
}

}  // namespace

int run_bench_gemm(const Args& given) {
  Args args = given;
  if (bench::take_device_option(args) == "cuda") return bench::run_bench_gemm_cuda(args);  // bench/cuda/
  const std::optional<GemmPlan> plan = parse_plan(args);
  if (!plan) return 0;
  GemmBuffers buffers = size_buffers(*plan);  // refused here when they would not fit
  // Phase 0: the machine's ceilings, now.
  Peaks peaks = Peaks::measure(plan->settings.threads, plan->quick ? 3 : 5, plan->settings.measure.clock);
  allocate_buffers(*plan, buffers);
  std::vector<std::string> notes;
  if (plan->settings.measure.clock != BenchClock::wall)
    notes.push_back("timed on the CPU clock (--clock): GFLOP/s per CPU-second, peaks timed the same way");
  std::optional<CopyCeiling> copy;
  if (std::any_of(plan->shapes.begin(), plan->shapes.end(), memory_bound)) {
    copy.emplace(*std::max_element(plan->settings.threads.begin(), plan->settings.threads.end()),
                 plan->settings.measure);
    notes.push_back(
        "GB/s = bytes moved (operands read once, outputs written once) / median time; xcopy = that / "
        "the copy bandwidth (read + write bytes) at the same footprint, xread = that / the read-only "
        "bandwidth of as many bytes; same threads, this run (min(m, n) <= 16 only)");
  }
  std::vector<BenchRow> rows = measure_cases(*plan, buffers, notes, copy ? &*copy : nullptr);
  // Phases 2 to 4: the peers (OpenBLAS child process, oneDNN, PyTorch child process), then the report.
  peaks.remeasure_keep_max(plan->quick ? 3 : 5);
  attach_peers(rows, peaks, plan->settings.peers, plan->settings.measure, notes);
  if (plan->json)
    print_json_rows(rows);
  else
    print_table(rows, peaks, notes, "ampkit bench gemm");
  return 0;
}

}  // namespace ampkit::tools
