// `ampkit bench gemm` (tools layer): GFLOP/s of ampkit's gemm over shapes, dtypes (fp16 modes),
// epilogues and thread counts, as a fraction of this machine's peak measured in the same run
// (fp32 FMA or bf16 dot-product loop) and as a ratio to OpenBLAS sgemm (own process) and oneDNN
// matmul (own phase) measured in the same run. Buffers are allocated once and pre-touched.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ampkit/core/error.hpp"
#include "ampkit/core/float16.hpp"
#include "ampkit/ops/gemm.hpp"
#include "ampkit/core/threading.hpp"
#include "tools/ampkit/bench_gemm_common.hpp"
#include "tools/ampkit/commands.hpp"

namespace ampkit::tools {
namespace {

using namespace bench;

constexpr const char* kCommand = "bench gemm";

void print_help() {
  std::printf(
      "usage: ampkit bench gemm [options]\n"
      "  --shapes MxNxK,...   default 4096x4096x1024,4096x1024x4096,2048x3072x768,512x512x512,\n"
      "                       128x768x768,1x4096x4096,16x4096x4096\n"
      "  --dtype LIST         f32,bf16,f16 (f16 = f16:exact,f16:flush,f16:alt); default all\n"
      "  --epilogue LIST      default DEFAULT,BIAS,GELU_AUX_BIAS,DGELU_BGRAD,BGRADB\n"
      "  --op nn|tn|nt|tt     op(A), op(B) (default nn)\n"
      "  --peers LIST         openblas,onednn (default) or none\n"
      "  --threads 1,2  --reps N  --quick  --json\n"
      "D (m x n, column-major) = epilogue(op(A) op(B)); A, B, D, bias, aux all in the dtype.\n"
      "GFLOP/s = 2mnk/s. Peaks and peers are measured in the same run.\n");
}

std::vector<PeerShape> parse_shapes(const std::string& text, Op op_a, Op op_b) {
  std::vector<PeerShape> out;
  for (const std::string& item : split_list(text)) {
    const std::vector<std::string> parts = split_list(item, 'x');
    if (parts.size() != 3) fail(kCommand, "--shapes expects MxNxK items, but got '", item, "'");
    PeerShape s;
    s.m = parse_int(parts[0], kCommand, "--shapes", 1, 1 << 20);
    s.n = parse_int(parts[1], kCommand, "--shapes", 1, 1 << 20);
    s.k = parse_int(parts[2], kCommand, "--shapes", 1, 1 << 20);
    s.op_a = op_a;
    s.op_b = op_b;
    out.push_back(s);
  }
  return out;
}

// Fills n elements of dtype t with uniform values in [-1, 1).
void fill(void* data, DType t, std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = dist(rng);
    if (t == DType::f32) static_cast<float*>(data)[i] = v;
    else if (t == DType::bf16) static_cast<std::uint16_t*>(data)[i] = float_to_bf16_bits(v);
    else static_cast<std::uint16_t*>(data)[i] = float_to_half_bits(v);
  }
}

}  // namespace

int run_bench_gemm(const Args& args) {
  const Options opt(args, kCommand, {{"--shapes", true}, {"--dtype", true}, {"--epilogue", true},
                                     {"--op", true}, {"--peers", true}});
  if (opt.common().help) {
    print_help();
    return 0;
  }
  const bool quick = opt.common().quick;
  const std::string op = opt.value_or("--op", "nn");
  if (op.size() != 2 || (op[0] != 'n' && op[0] != 't') || (op[1] != 'n' && op[1] != 't'))
    fail(kCommand, "--op must be nn, tn, nt or tt, but got '", op, "'");
  const Op op_a = op[0] == 't' ? Op::T : Op::N, op_b = op[1] == 't' ? Op::T : Op::N;
  const std::vector<PeerShape> shapes = parse_shapes(
      opt.value_or("--shapes", quick ? "512x512x512,128x768x768"
                                     : "4096x4096x1024,4096x1024x4096,2048x3072x768,512x512x512,"
                                       "128x768x768,1x4096x4096,16x4096x4096"),
      op_a, op_b);
  const std::vector<DtypeMode> dtypes =
      parse_dtype_modes(opt.value_or("--dtype", quick ? "f32,bf16" : "f32,bf16,f16"), kCommand);
  const std::vector<Epilogue> epilogues = parse_epilogues(
      opt.value_or("--epilogue", quick ? "DEFAULT,GELU_AUX_BIAS" : "DEFAULT,BIAS,GELU_AUX_BIAS,DGELU_BGRAD,BGRADB"),
      kCommand);
  const RunSettings settings = parse_run_settings(opt, quick, kCommand);
  const std::vector<int>& threads = settings.threads;
  const std::vector<std::string>& peers = settings.peers;
  const MeasureOptions& measure_options = settings.measure;

  // Phase 0: the machine's ceilings, now.
  Peaks peaks = Peaks::measure(threads, quick ? 3 : 5);

  // Buffers for the largest case, 4 bytes per element whatever the dtype; allocated once.
  std::int64_t max_a = 1, max_b = 1, max_d = 1, max_vec = 1, max_threads = 1;
  for (const PeerShape& s : shapes) {
    max_a = std::max(max_a, s.m * s.k);
    max_b = std::max(max_b, s.k * s.n);
    max_d = std::max(max_d, s.m * s.n);
    max_vec = std::max({max_vec, s.m, s.n});
  }
  for (int t : threads) max_threads = std::max<std::int64_t>(max_threads, t);
  const int touch = static_cast<int>(max_threads);
  AlignedBuffer a(static_cast<std::size_t>(max_a) * 4, touch), b(static_cast<std::size_t>(max_b) * 4, touch),
      d(static_cast<std::size_t>(max_d) * 4, touch), aux(static_cast<std::size_t>(max_d) * 4, touch),
      bias(static_cast<std::size_t>(max_vec) * 4, touch), bias_grad(static_cast<std::size_t>(max_vec) * 4, touch);

  // Phase 1: ampkit.
  std::vector<BenchRow> rows;
  std::vector<std::string> notes;
  const int saved_threads = num_threads();
  for (const DtypeMode& dm : dtypes) {
    fill(a.data(), dm.dtype, max_a, 1);
    fill(b.data(), dm.dtype, max_b, 2);
    fill(aux.data(), dm.dtype, max_d, 3);
    fill(bias.data(), dm.dtype, max_vec, 4);
    for (const PeerShape& s : shapes)
      for (Epilogue e : epilogues)
        for (int t : threads) {
          GemmArgs g;
          g.op_a = s.op_a;
          g.op_b = s.op_b;
          g.m = s.m;
          g.n = s.n;
          g.k = s.k;
          g.a = a.data();
          g.a_dtype = dm.dtype;
          g.lda = s.op_a == Op::N ? s.m : s.k;
          g.b = b.data();
          g.b_dtype = dm.dtype;
          g.ldb = s.op_b == Op::N ? s.k : s.n;
          g.d = d.data();
          g.d_dtype = dm.dtype;
          g.ldd = s.m;
          g.fp16_mode = dm.mode;
          g.epilogue.kind = e;
          g.epilogue.bias_dtype = dm.dtype;
          g.epilogue.aux_dtype = dm.dtype;
          g.epilogue.aux_ld = s.m;
          const bool bias_in = e == Epilogue::BIAS || e == Epilogue::RELU_BIAS || e == Epilogue::RELU_AUX_BIAS ||
                               e == Epilogue::GELU_BIAS || e == Epilogue::GELU_AUX_BIAS;
          const bool grad_out = e == Epilogue::DGELU_BGRAD || e == Epilogue::DRELU_BGRAD ||
                                e == Epilogue::BGRADA || e == Epilogue::BGRADB;
          const bool uses_aux = e == Epilogue::RELU_AUX || e == Epilogue::RELU_AUX_BIAS || e == Epilogue::GELU_AUX ||
                                e == Epilogue::GELU_AUX_BIAS || e == Epilogue::DGELU || e == Epilogue::DGELU_BGRAD ||
                                e == Epilogue::DRELU || e == Epilogue::DRELU_BGRAD;
          if (bias_in) g.epilogue.bias = bias.data();
          if (grad_out) g.epilogue.bias_grad = bias_grad.data();
          if (uses_aux) g.epilogue.aux = aux.data();
          const std::string problem = gemm_check(g);
          if (!problem.empty()) {
            notes.push_back(std::string("skipped ") + dm.name() + " " + epilogue_name(e) + ": " + problem);
            continue;
          }
          set_num_threads(t);
          BenchRow r;
          r.shape = s;
          r.dm = dm;
          r.epilogue = e;
          r.threads = t;
          r.kernel = gemm_kernel_name(g);
          const Measurement m = measure([&] { gemm(g); }, measure_options);
          r.ms = m.median_ms;
          r.gflops = gemm_gflops(s, m.median_ms);
          rows.push_back(r);
          if (!opt.common().json)
            std::fprintf(stderr, "  measured %s %lldx%lldx%lld %s %d thread(s): %.1f GFLOP/s\n", dm.name().c_str(),
                         static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
                         epilogue_name(e), t, r.gflops);
        }
  }
  set_num_threads(saved_threads);

  // Phases 2 and 3: the peers (OpenBLAS child process, then oneDNN), then the report.
  peaks.remeasure_keep_max(quick ? 3 : 5);
  attach_peers(rows, peaks, peers, measure_options, notes);
  print_rows(rows, peaks, notes, opt.common().json, "ampkit bench gemm");
  return 0;
}

}  // namespace ampkit::tools
